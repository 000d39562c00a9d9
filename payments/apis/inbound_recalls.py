"""The recalls TX answers, over the API (v2; docs/payments.md, "Recalls TX answers"): another
bank asks for the money of a SEPA credit back, and the institution accepts or refuses."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    CurrencyField,
    Serializer,
    StrictBooleanField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from core.selectors import get_of_institution
from institutions import scopes

from ..iso20022.codes import RECALL_REFUSALS
from ..models import InboundRecall
from ..services.inbound_recalls import inbound_recall_answer

TAGS = ["Payments"]


class InboundRecallAnswerCreate(StrictSerializer):
    accept = StrictBooleanField(help_text="True: the money goes back; false: refused.")
    reasonCode = serializers.ChoiceField(  # noqa: N815
        choices=sorted(RECALL_REFUSALS),
        required=False,
        allow_null=True,
        help_text="A refusal's, the EPC's: AC04 (account closed), AM04 (the money is no longer "
        "there), CUST (the customer refuses), LEGL (a legal decision), NOAS (no answer from the "
        "customer), NOOR (never received), ARDT (returned already). None when accepting.",
    )


class InboundRecallQuery(Serializer):
    status = serializers.ChoiceField(choices=InboundRecall.Status.choices, required=False)


class InboundRecallAnswerOut(Serializer):
    code = serializers.CharField(source="answer_code", help_text="The EPC's (NOAS).")
    reason = serializers.CharField(source="answer_reason", help_text="Normalized.")


class InboundRecallOut(Serializer):
    inboundRecallId = serializers.CharField(source="id")  # noqa: N815
    inboundEntryId = serializers.CharField(  # noqa: N815
        source="inbound_entry_id",
        allow_null=True,
        help_text="The credit it recalls; null when TX has none (refused NOOR).",
    )
    status = serializers.ChoiceField(choices=InboundRecall.Status.choices)
    reasonCode = serializers.CharField(  # noqa: N815
        source="reason_code", help_text="As the recalling bank sent it (DUPL, FRAD, CUST...)."
    )
    reason = serializers.CharField(help_text="Normalized.")
    originalEndToEndId = serializers.CharField(source="original_end_to_end_id")  # noqa: N815
    amount = AmountField(source="original_amount")
    currency = CurrencyField()
    originalSettlementDate = serializers.DateField(  # noqa: N815
        source="original_settlement_date"
    )
    answerDue = serializers.DateField(  # noqa: N815
        source="answer_due",
        help_text="The last day to answer; unanswered after it, refused NOAS by TX.",
    )
    refusal = serializers.SerializerMethodField(help_text="A refused recall: its reason.")
    fileId = serializers.CharField(source="file_id", help_text="The camt.056 it came in.")  # noqa: N815
    answerFileId = serializers.CharField(  # noqa: N815
        source="answer_file_id",
        allow_null=True,
        help_text="The camt.029 of the answer (an interbank profile's acceptance: its pacs.004).",
    )
    answeredAt = TimestampField(source="answered_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(InboundRecallAnswerOut(allow_null=True))
    def get_refusal(self, recall) -> dict | None:
        return InboundRecallAnswerOut(recall).data if recall.answer_code else None


def _recall_of(view: TXView, recall_id: str) -> InboundRecall:
    return get_of_institution(
        InboundRecall.objects.all(),
        institution=view.institution,
        id=recall_id,
        missing="No inbound recall with this id.",
    )


class InboundRecallListView(TXView):
    @document(
        name="InboundRecall",
        resources={V2: InboundRecallOut},
        many=True,
        summary="List the recalls of SEPA credits TX received, newest first",
        operation_id="inbound_recalls_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(InboundRecallQuery)
        rows = InboundRecall.objects.filter(institution=self.institution)
        if query.get("status"):
            rows = rows.filter(status=query["status"])
        return self.respond_list(rows, InboundRecallOut)


class InboundRecallDetailView(TXView):
    @document(
        name="InboundRecall",
        resources={V2: InboundRecallOut},
        summary="Retrieve a recall of a SEPA credit TX received",
        operation_id="inbound_recalls_retrieve",
        tags=TAGS,
    )
    def get(self, request, inboundRecallId):  # noqa: N803
        return self.respond(InboundRecallOut(_recall_of(self, inboundRecallId)).data)


class InboundRecallAnswersView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="InboundRecall",
        resources={V2: InboundRecallOut},
        request={V2: InboundRecallAnswerCreate},
        created=True,
        summary="Answer a recall of a SEPA credit: accept it (the money goes back) or refuse it",
        description="Accepted, the credit's money goes from the account it was applied to (or "
        "from suspense) back to the partner bank, which returns it; the credit is `returned` "
        "(FOCR). Refused, with the EPC's reason. Either way TX's camt.029 goes to the partner "
        "bank with the payments job's next files. 409 `invalid_state_transition` when the "
        "recall is answered already, or its credit cannot go back (accept nothing TX does not "
        "hold: refuse it NOOR or ARDT); 422 `insufficient_funds` when the account no longer "
        "has the money (refuse it AM04).",
        operation_id="inbound_recall_answers_create",
        tags=TAGS,
    )
    def post(self, request, inboundRecallId):  # noqa: N803
        recall = _recall_of(self, inboundRecallId)
        data = self.parse(InboundRecallAnswerCreate)
        answered = inbound_recall_answer(
            recall=recall,
            accept=data["accept"],
            reason=data.get("reasonCode"),
            actor=Actor.of_request(request),
        )
        return self.created(InboundRecallOut(answered).data)
