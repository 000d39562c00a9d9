"""`/rail-files` (v2 only; docs/payments.md): the files exchanged with the bank.

Scopes (docs/tenancy-and-keys.md): reading a file's record is `read`; the bank's side (uploading
its files, reading a file's bytes, which carry account numbers) needs `bank`, granted like
`network` is for the card network's side.
"""

import base64
import binascii

from rest_framework import serializers

from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictSerializer, TimestampField
from api.versions import V2
from api.views import TXView
from core.exceptions import ValidationFailed
from institutions import scopes

from ..models import Rail, RailFile
from ..selectors import rail_file_get, rail_file_list
from ..services.inbound_files import FileRefused, rail_file_receive

TAGS = ["Payments"]


# --- input
# The rails whose files the bank uploads: NACHA's, and SEPA credit transfers' ISO 20022 answers
# (pain.002, camt.054).
FILE_RAILS = [
    (Rail.ACH.value, Rail.ACH.label),
    (Rail.ACH_SAME_DAY.value, Rail.ACH_SAME_DAY.label),
    (Rail.SEPA_CT.value, Rail.SEPA_CT.label),
]


class RailFileUpload(StrictSerializer):
    rail = serializers.ChoiceField(choices=FILE_RAILS)
    name = StrictCharField(max_length=200)
    contentBase64 = StrictCharField(  # noqa: N815
        help_text="The file's bytes, base64 (at most MAX_BATCH_BODY_BYTES of body: larger files "
        "come through the inbox folder)."
    )


class RailFileQuery(Serializer):
    direction = serializers.ChoiceField(choices=RailFile.Direction.choices, required=False)


# --- output
class RailFileOut(Serializer):
    fileId = serializers.CharField(source="id")  # noqa: N815
    rail = serializers.ChoiceField(choices=Rail.choices)
    direction = serializers.ChoiceField(choices=RailFile.Direction.choices)
    status = serializers.ChoiceField(choices=RailFile.Status.choices)
    name = serializers.CharField()
    sha256 = serializers.CharField()
    windowDate = serializers.DateField(source="window_date", allow_null=True)  # noqa: N815
    window = serializers.CharField()
    entryCount = serializers.IntegerField(source="entry_count")  # noqa: N815
    debitTotal = serializers.IntegerField(source="debit_total")  # noqa: N815
    creditTotal = serializers.IntegerField(source="credit_total")  # noqa: N815
    error = serializers.CharField()
    deliveredAt = TimestampField(source="delivered_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class RailFileContentOut(Serializer):
    fileId = serializers.CharField(source="id")  # noqa: N815
    name = serializers.CharField()
    contentBase64 = serializers.SerializerMethodField()  # noqa: N815

    def get_contentBase64(self, rail_file) -> str:  # noqa: N802
        return base64.b64encode(bytes(rail_file.content)).decode()


# --- views
class RailFileListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        many=True,
        summary="List the files exchanged with the bank, newest first",
        operation_id="rail_files_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(RailFileQuery)
        rows = rail_file_list(institution=self.institution, direction=query.get("direction"))
        return self.respond_list(rows, RailFileOut)

    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        request={V2: RailFileUpload},
        created=True,
        summary="Upload one of the bank's files (returns, notifications of change, SEPA status "
        "reports and notifications)",
        description="Validated whole first (a NACHA file record by record; a `sepa_ct` file, a "
        "pain.002 or camt.054, against its official XSD): a file that is not valid answers 400 "
        "with the record and field, or the validator's message, that failed "
        "(`details.contentBase64`), and nothing of it is stored or applied. The same bytes again "
        "are the same file, applied once (201 with it as it was).",
        operation_id="rail_files_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(RailFileUpload)
        try:
            content = base64.b64decode(data["contentBase64"], validate=True)
        except (binascii.Error, ValueError):
            raise ValidationFailed(details={"contentBase64": "Not base64."}) from None
        try:
            rail_file = rail_file_receive(
                institution=self.institution,
                rail=data["rail"],
                name=data["name"],
                content=content,
                keep_refused=False,
            )
        except FileRefused as refused:
            raise ValidationFailed(details={"contentBase64": refused.reason}) from None
        return self.created(RailFileOut(rail_file).data)


class RailFileDetailView(TXView):
    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        summary="Retrieve a file's record",
        operation_id="rail_files_retrieve",
        tags=TAGS,
    )
    def get(self, request, fileId):  # noqa: N803
        rail_file = rail_file_get(institution=self.institution, file_id=fileId)
        return self.respond(RailFileOut(rail_file).data)


class RailFileContentView(TXView):
    read_scope = scopes.BANK

    @document(
        name="RailFileContent",
        resources={V2: RailFileContentOut},
        summary="A file's bytes (they carry account numbers: the bank's scope)",
        operation_id="rail_file_content_retrieve",
        tags=TAGS,
    )
    def get(self, request, fileId):  # noqa: N803
        rail_file = rail_file_get(institution=self.institution, file_id=fileId)
        rail_file = RailFile.objects.get(pk=rail_file.pk)  # with its bytes
        return self.respond(RailFileContentOut(rail_file).data)
