"""`/disputes` (v2 only; docs/disputes.md): a cardholder's dispute of a presented card payment.
File one (a draft), change its evidence and note while it is a draft, move it through its
stages (`/transitions`, scope `disputes:write`), and play the network's answers
(`/network-messages`, scope `network`, the sandbox's card network). v1, the legacy line, has
none of these paths.

The serializers check formats; the rules (what may be disputed, which move from which stage)
are the services' (`disputes.services`)."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StoredDataField,
    StrictBooleanField,
    StrictCharField,
    StrictDateField,
    StrictDateTimeField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from authorizations.selectors import authorization_get
from core.actors import Actor
from institutions import scopes

from .models import Dispute, DisputeDeadline, DisputeStep
from .selectors import dispute_get, dispute_list
from .services.filing import dispute_create, dispute_update
from .services.stages import (
    LIABILITIES,
    NETWORK_MESSAGES,
    dispute_network_message,
    dispute_transition,
)

TAGS = ["Disputes"]
MAX_FILES = 20


# --- input
class EvidenceFile(StrictSerializer):
    name = StrictCharField(max_length=200)
    reference = StrictCharField(
        max_length=200,
        help_text="Where the file is kept (the bank's document store id or URL): TX stores "
        "the reference, not the file.",
    )


class Evidence(StrictSerializer):
    """What supports the dispute, by its reason (every field optional)."""

    explanation = StrictCharField(required=False, max_length=2000)
    merchantContactedAt = StrictDateTimeField(  # noqa: N815
        source="merchant_contacted_at", required=False
    )
    expectedAt = StrictDateField(  # noqa: N815
        source="expected_at",
        required=False,
        help_text="Not received: when the goods or service were due.",
    )
    cancelledAt = StrictDateTimeField(  # noqa: N815
        source="cancelled_at", required=False, help_text="Cancelled: when the cardholder did."
    )
    duplicateOfTransactionId = StrictCharField(  # noqa: N815
        source="duplicate_of_transaction_id",
        required=False,
        max_length=40,
        help_text="Duplicate: the other payment's transaction id.",
    )
    files = EvidenceFile(many=True, required=False, max_length=MAX_FILES)

    def to_internal_value(self, data):
        # Stored as JSON in the domain's names: dates as ISO 8601 strings.
        values = super().to_internal_value(data)
        return {
            name: value.isoformat() if hasattr(value, "isoformat") else value
            for name, value in values.items()
        }


class DisputeCreate(StrictSerializer):
    authorizationId = StrictCharField(  # noqa: N815
        source="authorization_id",
        max_length=40,
        help_text="The presented card authorization (the card payment) disputed.",
    )
    amount = AmountField(
        help_text="Minor units of the payment's billing currency; at most what was presented, "
        "less its returns and other disputes.",
    )
    reason = serializers.ChoiceField(choices=Dispute.Reason.choices)
    cardholderContactedAt = StrictDateTimeField(  # noqa: N815
        source="cardholder_contacted_at",
        help_text="When the cardholder first told the issuer (the regulator's clocks start).",
    )
    note = StrictCharField(required=False, max_length=1000)
    evidence = Evidence(required=False)
    metadata = MetadataField(required=False)


class DisputeUpdate(StrictSerializer):
    note = StrictCharField(required=False, max_length=1000, allow_blank=True)
    evidence = Evidence(required=False, help_text="Replaces the evidence whole.")
    metadata = MetadataPatchField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


class TransitionCreate(StrictSerializer):
    to = serializers.ChoiceField(
        choices=[
            Dispute.Status.SUBMITTED,
            Dispute.Status.PREARBITRATION,
            Dispute.Status.ARBITRATION,
            Dispute.Status.CLOSED,
        ]
    )
    outcome = serializers.ChoiceField(
        required=False,
        choices=[Dispute.Outcome.WITHDRAWN, Dispute.Outcome.DENIED],
        help_text="Closing a draft or a submitted dispute: withdrawn or denied.",
    )
    liability = serializers.ChoiceField(
        required=False,
        choices=LIABILITIES,
        help_text="Closing with the loss accepted (a representment, a pre-arbitration): who "
        "bears what is open: `cardholder` (the provisional credit reversed) or `issuer` "
        "(written off).",
    )
    reason = StrictCharField(required=False, max_length=300, help_text="Why, in a few words.")


class NetworkMessageCreate(StrictSerializer):
    type = serializers.ChoiceField(choices=NETWORK_MESSAGES)
    amount = AmountField(
        required=False,
        help_text="representment_received: what the merchant re-presented (default: all that "
        "was charged back).",
    )
    accepted = StrictBooleanField(
        required=False, help_text="prearbitration_response: whether the merchant accepted."
    )
    inFavorOfIssuer = StrictBooleanField(  # noqa: N815
        source="in_favor_of_issuer",
        required=False,
        help_text="arbitration_ruling: whether the network ruled for the issuer.",
    )

    def validate(self, attrs):
        needed = {"prearbitration_response": "accepted", "arbitration_ruling": "in_favor_of_issuer"}
        name = needed.get(attrs["type"])
        if name is not None and name not in attrs:
            field = "inFavorOfIssuer" if name == "in_favor_of_issuer" else name
            raise serializers.ValidationError({field: f"Required with `{attrs['type']}`."})
        return attrs


class DisputeQuery(Serializer):
    status = serializers.ChoiceField(choices=Dispute.Status.choices, required=False)
    cardId = StrictCharField(required=False, max_length=40)  # noqa: N815
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    authorizationId = StrictCharField(required=False, max_length=40)  # noqa: N815
    dueBy = StrictDateField(required=False)  # noqa: N815


# --- output
class DisputeStepOut(Serializer):
    stepId = serializers.CharField(source="id")  # noqa: N815
    kind = serializers.ChoiceField(choices=DisputeStep.Kind.choices)
    fromStatus = serializers.CharField(source="from_status_or_none", allow_null=True)  # noqa: N815
    toStatus = serializers.CharField(source="to_status")  # noqa: N815
    amount = serializers.IntegerField(help_text="Money it moved (its journal); 0: none.")
    journalId = serializers.CharField(source="journal_id", allow_null=True)  # noqa: N815
    reason = serializers.CharField(source="reason_or_none", allow_null=True)
    createdAt = TimestampField(source="created_at")  # noqa: N815


class DisputeDeadlineOut(Serializer):
    name = serializers.ChoiceField(choices=DisputeDeadline.Name.choices)
    dueOn = serializers.DateField(  # noqa: N815
        source="due_on",
        help_text="The institution's calendar day by which it must happen (still in time on it).",
    )
    metAt = TimestampField(source="met_at", allow_null=True)  # noqa: N815
    missedAt = TimestampField(  # noqa: N815
        source="missed_at", allow_null=True, help_text="When the deadline job found it missed."
    )


class DisputeOut(Serializer):
    disputeId = serializers.CharField(source="id")  # noqa: N815
    authorizationId = serializers.CharField(source="authorization_id")  # noqa: N815
    cardId = serializers.CharField(source="card_id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    reason = serializers.ChoiceField(choices=Dispute.Reason.choices)
    status = serializers.ChoiceField(choices=Dispute.Status.choices)
    outcome = serializers.ChoiceField(
        source="outcome_or_none", choices=Dispute.Outcome.choices, allow_null=True
    )
    resolutionReason = serializers.CharField(  # noqa: N815
        source="resolution_reason_or_none", allow_null=True
    )
    cardholderContactedAt = TimestampField(source="cardholder_contacted_at")  # noqa: N815
    note = serializers.CharField()
    evidence = StoredDataField()
    provisionalCredit = serializers.IntegerField(  # noqa: N815
        source="provisional_credit",
        help_text="Credited to the cardholder for the dispute and not given back: provisionally "
        "while it runs; once closed, what they keep (recovered + writtenOff), after a reversal "
        "held for the policy's notice (provisionalCreditReversesOn).",
    )
    provisionalCreditReversesOn = serializers.DateField(  # noqa: N815
        source="provisional_credit_reverses_on",
        allow_null=True,
        help_text="A closed dispute's reversal of the credit the cardholder does not keep, held "
        "for the dispute policy's notice (Reg E: five business days): the notice's last day in "
        "the institution's calendar; it is posted the day after. Null when none is held.",
    )
    recovered = serializers.IntegerField(help_text="What the network gave back.")
    cardholderLiable = serializers.IntegerField(  # noqa: N815
        source="cardholder_liable",
        help_text="What the cardholder bears (denied, withdrawn or lost).",
    )
    writtenOff = serializers.IntegerField(  # noqa: N815
        source="written_off", help_text="What the issuer absorbed."
    )
    remaining = serializers.IntegerField(
        help_text="Still open. recovered + cardholderLiable + writtenOff + remaining = amount."
    )
    steps = DisputeStepOut(many=True, help_text="Its history, oldest first.")
    deadlines = DisputeDeadlineOut(
        many=True,
        help_text="Its due dates, from its card product's dispute policy (docs/disputes.md, "
        '"Deadlines").',
    )
    metadata = MetadataField()
    submittedAt = TimestampField(source="submitted_at", allow_null=True)  # noqa: N815
    closedAt = TimestampField(source="closed_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class DisputeListView(TXView):
    write_scope = scopes.DISPUTES_WRITE

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        request={V2: DisputeCreate},
        created=True,
        summary="File a dispute (a draft)",
        description="On a presented card payment (`authorizationId`), for `amount` at most "
        "what was presented less its returns and other disputes (422 "
        "`amount_exceeds_remaining`; PostgreSQL refuses more, concurrent disputes "
        "included). 409 `invalid_state_transition` unless the payment is presented. v2 only "
        "(docs/disputes.md).",
        operation_id="disputes_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(DisputeCreate)
        authorization = authorization_get(
            institution=self.institution, authorization_id=data.pop("authorization_id")
        )
        dispute = dispute_create(
            authorization=authorization, actor=Actor.of_request(request), **data
        )
        return self.created(_represent(self, dispute))

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        many=True,
        parameters=[
            OpenApiParameter("status", str, enum=Dispute.Status.values, description="Only these."),
            OpenApiParameter("cardId", str, description="Only this card's."),
            OpenApiParameter("accountId", str, description="Only this account's."),
            OpenApiParameter("authorizationId", str, description="Only this payment's."),
            OpenApiParameter(
                "dueBy",
                str,
                description="Only those with a deadline not met due on or before this date "
                "(YYYY-MM-DD): the disputes due.",
            ),
        ],
        summary="List disputes, newest first",
        operation_id="disputes_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(DisputeQuery)
        disputes = dispute_list(
            institution=self.institution,
            status=query.get("status"),
            card_id=query.get("cardId"),
            account_id=query.get("accountId"),
            authorization_id=query.get("authorizationId"),
            due_by=query.get("dueBy"),
        )
        return self.respond_list(disputes, DisputeOut)


class DisputeDetailView(TXView):
    write_scope = scopes.DISPUTES_WRITE

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        summary="Retrieve a dispute",
        operation_id="disputes_retrieve",
        tags=TAGS,
    )
    def get(self, request, disputeId):  # noqa: N803 (path parameters are camelCase)
        return self.respond(DisputeOut(_get(self, disputeId)).data)

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        request={V2: DisputeUpdate},
        summary="Change a dispute's evidence, note or metadata",
        description="`evidence` (replaced whole) and `note` while it is a draft (409 "
        "`invalid_state_transition` after); `metadata` merged at any stage.",
        operation_id="disputes_update",
        tags=TAGS,
    )
    def patch(self, request, disputeId):  # noqa: N803
        dispute = _get(self, disputeId)
        data = self.parse(DisputeUpdate)
        dispute = dispute_update(dispute=dispute, actor=Actor.of_request(request), **data)
        return self.respond(_represent(self, dispute))


class TransitionsView(TXView):
    write_scope = scopes.DISPUTES_WRITE

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        request={V2: TransitionCreate},
        created=True,
        summary="Move a dispute to its next stage",
        description="`submitted` (a draft: the cardholder is credited provisionally), "
        "`prearbitration` (after a representment), `arbitration` (after the network declined "
        "the pre-arbitration), `closed` (`outcome` withdrawn or denied from a draft or a "
        "submitted dispute; with `liability` from a representment or a pre-arbitration; "
        "won from a chargeback nothing was re-presented against). 409 "
        "`invalid_state_transition` for every other move.",
        operation_id="dispute_transitions_create",
        tags=TAGS,
    )
    def post(self, request, disputeId):  # noqa: N803
        dispute = _get(self, disputeId)
        data = self.parse(TransitionCreate)
        dispute = dispute_transition(dispute=dispute, actor=Actor.of_request(request), **data)
        return self.created(_represent(self, dispute))


class NetworkMessagesView(TXView):
    write_scope = scopes.NETWORK

    @document(
        name="Dispute",
        resources={V2: DisputeOut},
        request={V2: NetworkMessageCreate},
        created=True,
        summary="The card network's answer about a dispute (the sandbox's network)",
        description="`chargeback_accepted` (submitted → chargeback), `representment_received` "
        "(chargeback → representment, `amount`), `prearbitration_response` (`accepted`: "
        "closes won; declined: the issuer may file arbitration), `arbitration_ruling` "
        "(`inFavorOfIssuer`; closes). 409 `invalid_state_transition` at any other stage.",
        operation_id="dispute_network_messages_create",
        tags=TAGS,
    )
    def post(self, request, disputeId):  # noqa: N803
        dispute = _get(self, disputeId)
        data = self.parse(NetworkMessageCreate)
        dispute = dispute_network_message(
            dispute=dispute,
            message=data.pop("type"),
            actor=Actor.of_request(request),
            **data,
        )
        return self.created(_represent(self, dispute))


def _get(view, dispute_id: str) -> Dispute:
    return dispute_get(institution=view.institution, dispute_id=dispute_id)


def _represent(view, dispute: Dispute) -> dict:
    """The dispute as it now stands, with its steps."""
    return DisputeOut(_get(view, dispute.pk)).data
