"""`/decisioning-endpoints` (v2 only; docs/decisioning.md): where the program decides card
authorizations in real time. Create, list, read and change them, rotate their signing secret,
test them. v1, the legacy line, has none of these paths.

The serializers check formats; the rules (URL targets, timeout range, choices, one endpoint per
institution and per card product) are the services' (`decisioning.services`)."""

from django.conf import settings
from rest_framework import serializers

from api import idempotency, ratelimit
from api.schema import document
from api.serializers import (
    Serializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)
from api.versions import V2
from api.views import TXView
from core.outbound.targets import MAX_URL_LENGTH
from institutions import scopes

from .models import MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, DecisioningEndpoint
from .selectors import decisioning_endpoint_get, decisioning_endpoint_list
from .services import (
    DEFAULT_OVERLAP_SECONDS,
    MAX_ANSWER_CHARS,
    MAX_OVERLAP_SECONDS,
    decisioning_endpoint_create,
    decisioning_endpoint_rotate_secret,
    decisioning_endpoint_test,
    decisioning_endpoint_update,
)

TAGS = ["Decisioning"]
URL_HELP = (
    "Where TX POSTs each authorization to decide (and the self-test). `https` in production, "
    "no credentials in the URL; the host must resolve to public addresses only: the target "
    "rules of webhook endpoints."
)
TIMEOUT_HELP = (
    f"How long TX waits for the answer, in milliseconds ({MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}): "
    "resolving, connecting, TLS and the answer included."
)
ON_FAILURE_HELP = (
    "What decides when the program does not answer in time, or answers anything but a 2xx "
    "JSON decision signed for the request: `decline`, `approve`, or `standin` (TX's own ledger "
    "and controls decide)."
)
MODE_HELP = (
    "`live`: the program's answer is obeyed. `shadow`: called and recorded, not obeyed. `jit`: "
    "live, asked before TX's funds check, and its approval funds the payment from the "
    "program's funding account (`/program-funding-accounts`)."
)
UNSIGNED_HELP = (
    "Whether an answer with no signature (no `webhook-signature`) is taken. Default false: the "
    "program signs its answer as TX signs its request (Standard Webhooks over the answer's "
    "body with the endpoint's secret, its `webhook-id` the request's) and an unsigned answer "
    "is a failure `onFailure` decides. True still refuses a wrongly signed, stale or replayed "
    "answer."
)
SELF_TESTS_LIMITED = "Too many self-tests for this API key. Retry after the time in Retry-After."
SIGNING_HELP = (
    "Requests are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, "
    "`webhook-signature`); during a rotation's overlap `webhook-signature` carries two `v1,` "
    "signatures, one per secret. The program signs its answer the same way, with its "
    "`webhook-id` the request's (either secret during the overlap)."
)


# --- input
class DecisioningEndpointCreate(StrictSerializer):
    url = StrictCharField(max_length=MAX_URL_LENGTH, trim_whitespace=False, help_text=URL_HELP)
    timeoutMs = WholeNumberField(  # noqa: N815
        source="timeout_ms",
        min_value=MIN_TIMEOUT_MS,
        max_value=MAX_TIMEOUT_MS,
        help_text=TIMEOUT_HELP,
    )
    onFailure = serializers.ChoiceField(  # noqa: N815
        source="on_failure",
        choices=DecisioningEndpoint.OnFailure.choices,
        help_text=ON_FAILURE_HELP,
    )
    mode = serializers.ChoiceField(choices=DecisioningEndpoint.Mode.choices, help_text=MODE_HELP)
    cardProductRid = StrictCharField(  # noqa: N815
        source="card_product_id",
        required=False,
        max_length=40,
        help_text="The card product this endpoint decides for; absent: the institution's "
        "endpoint, for every card whose product has none. One of each at most.",
    )
    enabled = StrictBooleanField(required=False, help_text="Default true.")
    acceptUnsignedAnswers = StrictBooleanField(  # noqa: N815
        source="accept_unsigned_answers", required=False, help_text=UNSIGNED_HELP
    )


class DecisioningEndpointUpdate(StrictSerializer):
    url = StrictCharField(
        max_length=MAX_URL_LENGTH, trim_whitespace=False, required=False, help_text=URL_HELP
    )
    timeoutMs = WholeNumberField(  # noqa: N815
        source="timeout_ms",
        required=False,
        min_value=MIN_TIMEOUT_MS,
        max_value=MAX_TIMEOUT_MS,
        help_text=TIMEOUT_HELP,
    )
    onFailure = serializers.ChoiceField(  # noqa: N815
        source="on_failure",
        required=False,
        choices=DecisioningEndpoint.OnFailure.choices,
        help_text=ON_FAILURE_HELP,
    )
    mode = serializers.ChoiceField(
        required=False, choices=DecisioningEndpoint.Mode.choices, help_text=MODE_HELP
    )
    enabled = StrictBooleanField(required=False)
    acceptUnsignedAnswers = StrictBooleanField(  # noqa: N815
        source="accept_unsigned_answers", required=False, help_text=UNSIGNED_HELP
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


class SecretRotationCreate(StrictSerializer):
    overlapSeconds = WholeNumberField(  # noqa: N815
        source="overlap_seconds",
        required=False,
        min_value=0,
        max_value=MAX_OVERLAP_SECONDS,
        help_text=f"How long the previous secret keeps signing too (default "
        f"{DEFAULT_OVERLAP_SECONDS}: 24 h; 0: it stops now; at most 7 days).",
    )


class SelfTestCreate(StrictSerializer):
    """Nothing to send."""


# --- output
class DecisioningEndpointOut(Serializer):
    endpointId = serializers.CharField(source="id")  # noqa: N815
    cardProductRid = serializers.CharField(source="card_product_id", allow_null=True)  # noqa: N815
    url = serializers.CharField()
    timeoutMs = serializers.IntegerField(source="timeout_ms")  # noqa: N815
    onFailure = serializers.ChoiceField(  # noqa: N815
        source="on_failure", choices=DecisioningEndpoint.OnFailure.choices
    )
    mode = serializers.ChoiceField(choices=DecisioningEndpoint.Mode.choices)
    enabled = serializers.BooleanField()
    acceptUnsignedAnswers = serializers.BooleanField(  # noqa: N815
        source="accept_unsigned_answers", help_text=UNSIGNED_HELP
    )
    previousSecretExpiresAt = TimestampField(  # noqa: N815
        source="previous_secret_expires_at",
        allow_null=True,
        help_text="Until when the secret before the last rotation still signs too; null when "
        "only the current one signs.",
    )
    consecutiveFailures = serializers.IntegerField(  # noqa: N815
        source="consecutive_failures",
        help_text="Calls that failed in a row (a valid answer resets it).",
    )
    degradedAt = TimestampField(  # noqa: N815
        source="degraded_at",
        allow_null=True,
        help_text="Since when the circuit breaker keeps TX from calling it (5 failures in a "
        "row; `onFailure` decides meanwhile, one probe every 30 s); null: called.",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class DecisioningEndpointWithSecret(DecisioningEndpointOut):
    secret = serializers.CharField(
        help_text="The signing secret (`whsec_` + base64), shown only in this response: store "
        "it now. " + SIGNING_HELP
    )


class SelfTestOut(Serializer):
    ok = serializers.BooleanField(
        help_text="The endpoint answered 2xx within `timeoutMs`, signed for this request, with "
        f"a JSON object carrying a boolean `approved` (at most {MAX_ANSWER_CHARS} characters)."
    )
    status = serializers.IntegerField(
        allow_null=True, help_text="The HTTP status; null when there was no answer."
    )
    latencyMs = serializers.IntegerField(source="latency_ms")  # noqa: N815
    error = serializers.CharField(allow_null=True, help_text="Why not ok; null when ok.")


def _with_secret(created) -> dict:
    return {**DecisioningEndpointOut(created.endpoint).data, "secret": created.secret}


class DecisioningEndpointListView(TXView):
    write_scope = scopes.DECISIONING_WRITE

    @document(
        name="DecisioningEndpointCreated",
        resources={V2: DecisioningEndpointWithSecret},
        request={V2: DecisioningEndpointCreate},
        created=True,
        summary="Create a decisioning endpoint",
        description="The institution's endpoint, or (with `cardProductRid`) one card product's; "
        "409 `already_exists` when it has one. The response carries the signing `secret`, "
        "once. v2 only (docs/decisioning.md).",
        operation_id="decisioning_endpoints_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(DecisioningEndpointCreate)
        created = decisioning_endpoint_create(institution=self.institution, **data)
        # Replayed by the same Idempotency-Key, the secret comes back: stored encrypted, as
        # every stored response is (api.idempotency).
        return self.created(_with_secret(created))

    @document(
        name="DecisioningEndpoint",
        resources={V2: DecisioningEndpointOut},
        many=True,
        summary="List decisioning endpoints, newest first",
        operation_id="decisioning_endpoints_list",
        tags=TAGS,
    )
    def get(self, request):
        return self.respond_list(
            decisioning_endpoint_list(institution=self.institution), DecisioningEndpointOut
        )


class DecisioningEndpointDetailView(TXView):
    write_scope = scopes.DECISIONING_WRITE

    @document(
        name="DecisioningEndpoint",
        resources={V2: DecisioningEndpointOut},
        summary="Retrieve a decisioning endpoint",
        operation_id="decisioning_endpoints_retrieve",
        tags=TAGS,
    )
    def get(self, request, endpointId):  # noqa: N803 (path parameters are camelCase)
        endpoint = decisioning_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        return self.respond(DecisioningEndpointOut(endpoint).data)

    @document(
        name="DecisioningEndpoint",
        resources={V2: DecisioningEndpointOut},
        request={V2: DecisioningEndpointUpdate},
        summary="Change a decisioning endpoint",
        description="Send only what changes: `url`, `timeoutMs`, `onFailure`, `mode`, "
        "`enabled`, `acceptUnsignedAnswers`. The card product an endpoint is for does not "
        "change.",
        operation_id="decisioning_endpoints_update",
        tags=TAGS,
    )
    def patch(self, request, endpointId):  # noqa: N803
        endpoint = decisioning_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        changes = self.parse(DecisioningEndpointUpdate)
        endpoint = decisioning_endpoint_update(endpoint=endpoint, changes=changes).value
        return self.respond(DecisioningEndpointOut(endpoint).data)


class SecretRotationView(TXView):
    write_scope = scopes.DECISIONING_WRITE

    @document(
        name="DecisioningEndpointRotated",
        resources={V2: DecisioningEndpointWithSecret},
        request={V2: SecretRotationCreate},
        created=True,
        summary="Rotate a decisioning endpoint's signing secret",
        description="A new `secret`, shown once. The previous one keeps signing too until "
        "`previousSecretExpiresAt` (`overlapSeconds`, default 24 h). " + SIGNING_HELP,
        operation_id="decisioning_endpoint_secret_rotations_create",
        tags=TAGS,
    )
    def post(self, request, endpointId):  # noqa: N803
        endpoint = decisioning_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        data = self.parse(SecretRotationCreate)
        rotated = decisioning_endpoint_rotate_secret(endpoint=endpoint, **data)
        return self.created(_with_secret(rotated))


class SelfTestView(TXView):
    """Changes nothing: it runs with no operation, no transaction and no idempotency record
    (the `Idempotency-Key` is still required and checked, as on every v2 POST, but each
    request calls the endpoint anew), so no database transaction is open while TX waits.
    Each self-test is a call of a program: DECISIONING_SELF_TESTS_PER_KEY per API key and
    rate-limit window, counted exactly once the request is one (its key, body and endpoint
    checked: a malformed request is its 400, never a self-test's 429), before the call (429
    `rate_limited`)."""

    write_scope = scopes.DECISIONING_WRITE

    def _run_write(self, request, handler, *args, **kwargs):
        idempotency.parse_key(request, required=True)
        request.data  # noqa: B018 (parsed first: a malformed body is 400 before anything runs)
        return handler(request, *args, **kwargs)

    @document(
        name="DecisioningSelfTest",
        resources={V2: SelfTestOut},
        request={V2: SelfTestCreate},
        summary="Test a decisioning endpoint",
        description='POSTs a signed `{type: "decisioning.test", id, endpointId, createdAt}` '
        "to the endpoint within its `timeoutMs` and reports the outcome: ok when it answers "
        "2xx, signed for this request, with a JSON object carrying a boolean `approved`. "
        "Changes nothing, is not replayed by its Idempotency-Key. 429 `rate_limited` (with "
        "`Retry-After`) past the self-tests an API key may run per rate-limit window, and "
        "while the institution's calls of its programs in flight are at their limit. "
        + SIGNING_HELP,
        operation_id="decisioning_endpoint_tests_create",
        tags=TAGS,
    )
    def post(self, request, endpointId):  # noqa: N803
        endpoint = decisioning_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        self.parse(SelfTestCreate)
        ratelimit.count_exactly(
            bucket=f"self-tests:key:{request.auth.pk}",
            limit=settings.DECISIONING_SELF_TESTS_PER_KEY,
            message=SELF_TESTS_LIMITED,
        )
        result = decisioning_endpoint_test(endpoint=endpoint)
        return self.respond(SelfTestOut(result).data)
