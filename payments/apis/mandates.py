"""`/mandates` (v2 only; docs/payments.md): the SEPA direct debit mandates under which the
institution collects from external accounts (`sepa_dd` payment orders).

Scopes (docs/tenancy-and-keys.md): reading is `read`; mandates are recorded, amended and
cancelled with `payments:write`, a scope of its own that no key has unless granted on purpose
(not in `full`).
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    MetadataField,
    Serializer,
    StrictCharField,
    StrictDateField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from institutions import scopes

from ..models import Mandate
from ..selectors import mandate_get
from ..services.mandates import mandate_amend, mandate_cancel, mandate_create
from .common import CancellationCreate

TAGS = ["Payments"]


# --- input
class MandateCreate(StrictSerializer):
    externalAccountId = StrictCharField(  # noqa: N815
        max_length=40, help_text="The debtor's account: a SEPA external account."
    )
    mandateReference = StrictCharField(  # noqa: N815
        max_length=35,
        trim_whitespace=False,
        help_text="The mandate's reference (AT-01): 1 to 35 characters of the SEPA character "
        "set, unique in the institution.",
    )
    signatureDate = StrictDateField(help_text="When the debtor signed it (not in the future).")  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices)
    type = serializers.ChoiceField(choices=Mandate.Type.choices)
    metadata = MetadataField(required=False)


class MandateUpdate(StrictSerializer):
    externalAccountId = StrictCharField(  # noqa: N815
        max_length=40, required=False, help_text="A new debtor account (a SEPA external account)."
    )
    mandateReference = StrictCharField(  # noqa: N815
        max_length=35, required=False, trim_whitespace=False, help_text="A new reference."
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


class MandateQuery(Serializer):
    status = serializers.ChoiceField(choices=Mandate.Status.choices, required=False)
    externalAccountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices, required=False)


# --- output
class AmendmentOut(Serializer):
    originalMandateReference = serializers.CharField(  # noqa: N815
        source="original_reference", help_text="Empty: the reference did not change."
    )
    originalExternalAccountId = serializers.CharField(  # noqa: N815
        source="original_external_account_id", allow_null=True
    )
    amendedAt = TimestampField(source="amended_at")  # noqa: N815


class MandateOut(Serializer):
    mandateId = serializers.CharField(source="id")  # noqa: N815
    externalAccountId = serializers.CharField(source="external_account_id")  # noqa: N815
    mandateReference = serializers.CharField(source="reference")  # noqa: N815
    signatureDate = serializers.DateField(source="signature_date")  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices)
    type = serializers.ChoiceField(choices=Mandate.Type.choices)
    status = serializers.ChoiceField(choices=Mandate.Status.choices)
    pendingAmendment = serializers.SerializerMethodField(  # noqa: N815
        help_text="An amendment the next collection carries to the debtor's bank; null: none."
    )
    cancelledAt = TimestampField(source="cancelled_at", allow_null=True)  # noqa: N815
    cancellationReason = serializers.CharField(source="cancelled_reason")  # noqa: N815
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(AmendmentOut(allow_null=True))
    def get_pendingAmendment(self, mandate) -> dict | None:  # noqa: N802
        if not mandate.original_reference and mandate.original_external_account_id is None:
            return None
        return AmendmentOut(mandate).data


# --- views
class MandateListView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: MandateCreate},
        created=True,
        summary="Record a SEPA direct debit mandate",
        description="The debtor's authorization to collect from a SEPA external account, "
        "under the institution's creditor identifier. 422 `creditor_identifier_missing` (no "
        "SEPA profile with a creditor identifier), `duplicate_reference` (a "
        "reference the institution has used).",
        operation_id="mandates_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(MandateCreate)
        mandate = mandate_create(
            institution=self.institution,
            external_account_id=data["externalAccountId"],
            reference=data["mandateReference"],
            signature_date=data["signatureDate"],
            scheme=data["scheme"],
            type=data["type"],
            metadata=data.get("metadata"),
            actor=Actor.of_request(request),
        )
        return self.created(MandateOut(mandate).data)

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        many=True,
        summary="List mandates, newest first",
        operation_id="mandates_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(MandateQuery)
        rows = Mandate.objects.filter(institution=self.institution)
        for field, value in (
            ("status", query.get("status")),
            ("external_account_id", query.get("externalAccountId")),
            ("scheme", query.get("scheme")),
        ):
            if value is not None:
                rows = rows.filter(**{field: value})
        return self.respond_list(rows, MandateOut)


class MandateDetailView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        summary="Retrieve a mandate",
        operation_id="mandates_retrieve",
        tags=TAGS,
    )
    def get(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        return self.respond(MandateOut(mandate).data)

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: MandateUpdate},
        summary="Amend a mandate's debtor account or reference",
        description="What the EPC lets a creditor amend; the next collection carries the "
        "amendment to the debtor's bank. 409 `invalid_state_transition` for a cancelled mandate, "
        "or a new debtor account while a collection for the old one waits for its cut-off; 422 "
        "`duplicate_reference`.",
        operation_id="mandates_update",
        tags=TAGS,
    )
    def patch(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        data = self.parse(MandateUpdate)
        mandate = mandate_amend(
            mandate=mandate,
            external_account_id=data.get("externalAccountId"),
            reference=data.get("mandateReference"),
            actor=Actor.of_request(request),
        ).value
        return self.respond(MandateOut(mandate).data)


class MandateCancellationsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: CancellationCreate},
        created=True,
        summary="Cancel a mandate",
        description="No collection under it from now on; one waiting for its cut-off is "
        "cancelled with it. 409 `invalid_state_transition` when it is cancelled already.",
        operation_id="mandate_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        data = self.parse(CancellationCreate)
        mandate = mandate_cancel(
            mandate=mandate, reason=data.get("reason", ""), actor=Actor.of_request(request)
        ).value
        return self.created(MandateOut(mandate).data)
