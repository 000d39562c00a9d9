"""Decisioning endpoints: created, changed, their secret rotated, and tested, through the API
(issue 31 item 1; docs/decisioning.md). Each service validates what it is given, whoever calls
it, and answers 400 `validation_error` with `details` keyed by the domain's field names
(`url`, `timeout_ms`, `on_failure`, `mode`, `enabled`, `overlap_seconds`; the API renders them
in its own, `api.names`), 404 `not_found` for a card product of another institution and 409
`already_exists` when the institution (or the card product) has its endpoint already.

The URL follows the outbound target rules of webhooks (`core.outbound.targets`: https where
WEBHOOK_REQUIRE_HTTPS, forced in production; no credentials; public addresses only unless
WEBHOOK_ALLOW_PRIVATE_TARGETS); the address check resolves the host, so it runs before any
lock or insert.

Signing: Standard Webhooks, as webhook deliveries (`webhook-id`, `webhook-timestamp`,
`webhook-signature`). After a rotation the request carries two signatures in its one
`webhook-signature` header (`v1,<new> v1,<previous>`, space-separated, as the specification
allows) until the previous secret's overlap ends, so a program verifying with either secret
accepts it. The program signs its answer the same way (issue 47): over the answer's body, with
either secret while both sign, its `webhook-id` the request's message id (an answer recorded
for one authorization is no answer for another) and its timestamp within Standard Webhooks'
tolerance; anything else is a failed call (`call`, `verify_answer`). An endpoint with
`accept_unsigned_answers` takes an answer that carries no signature at all, never a wrong one.

The self-test (`decisioning_endpoint_test`) POSTs a signed `decisioning.test` request and
reports what came back; it writes nothing and must be called with no database transaction open
(it refuses otherwise): no row lock or transaction is held while TX waits for a program. Item 2
of issue 31 calls the endpoint during an authorization the same way (`ask_about_authorization`).
Every call holds one of its institution's slots in the process (`decisioning.calls`): a
self-test takes its own, an authorization's is taken in its first transaction.
"""

import base64
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from cards.selectors import card_product_get
from core.actors import current_actor
from core.exceptions import AlreadyExists, RateLimited, ValidationFailed
from core.ids import new_id
from core.operations import Outcome, changed, unchanged
from core.outbound import transport
from core.outbound.targets import TargetRefused, check_url, parse_url
from core.rows import row_update
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.models import Institution

from . import calls
from .locks import lock_endpoint
from .models import MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, DecisioningEndpoint
from .payloads import authorization_payload, increment_payload, test_payload

SECRET_PREFIX = "whsec_"  # noqa: S105 (the format's prefix, not a secret)
SECRET_BYTES = 32
USER_AGENT = "TX-Decisioning/1.0"
# How long the previous secret keeps signing after a rotation, unless the caller says.
DEFAULT_OVERLAP_SECONDS = 24 * 3600
MAX_OVERLAP_SECONDS = 7 * 24 * 3600
# The most of a program's answer read (characters): an answer is a small JSON object.
MAX_ANSWER_CHARS = 4096
# The headers that sign a program's answer (Standard Webhooks), the only ones TX reads of it.
SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
# How far an answer's `webhook-timestamp` may be from TX's clock, either way: the tolerance of
# Standard Webhooks (its libraries' verify refuses beyond it too).
ANSWER_TOLERANCE_SECONDS = 5 * 60
INVALID_ANSWER = (
    "invalid answer: not a JSON object with a boolean `approved` "
    f"(at most {MAX_ANSWER_CHARS} characters)"
)
SELF_TEST_BUSY = (
    "This institution's calls of its programs in flight are at their limit. Retry after the "
    "time in Retry-After."
)

# The fields a change may name (domain names). The card product is what the endpoint is for:
# not changed, another endpoint is created instead.
UPDATABLE = frozenset(
    {"url", "timeout_ms", "on_failure", "mode", "enabled", "accept_unsigned_answers"}
)
# A change of these gives a degraded endpoint a fresh start (decisioning.breaker): a new target,
# deadline or rule for the answer's signature is not the one that failed.
RESETS_BREAKER = frozenset({"url", "timeout_ms", "enabled", "accept_unsigned_answers"})


@dataclass(frozen=True)
class WithSecret:
    """An endpoint just created or just rotated. `secret` is the only copy shown to anyone:
    show it once."""

    endpoint: DecisioningEndpoint
    secret: str


def new_secret() -> str:
    """`whsec_` and the base64 of 32 random bytes, as Standard Webhooks libraries read it."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _event_data(endpoint: DecisioningEndpoint) -> dict:
    # In the domain's names (the payload renders them in the API's, api.names). No URL (it may
    # carry a token) and no secret.
    return {
        "endpoint_id": endpoint.pk,
        "card_product_id": endpoint.card_product_id,
        "timeout_ms": endpoint.timeout_ms,
        "on_failure": endpoint.on_failure,
        "mode": endpoint.mode,
        "enabled": endpoint.enabled,
        "accept_unsigned_answers": endpoint.accept_unsigned_answers,
    }


# --- create, update
def decisioning_endpoint_create(
    *,
    institution: Institution,
    url: str,
    timeout_ms: int,
    on_failure: str,
    mode: str,
    card_product_id: str | None = None,
    enabled: bool = True,
    accept_unsigned_answers: bool = False,
) -> WithSecret:
    """The institution's endpoint (`card_product_id` None) or one card product's; it refuses
    unsigned answers unless `accept_unsigned_answers`. 400 on a
    field out of its rules; 404 when the card product is not the institution's; 409
    `already_exists` (details: the `endpoint_id` there is) when the institution, or the card
    product, has its endpoint already, also when two requests race (the unique indexes decide).
    Emits `decisioning_endpoint.created`. Returns the endpoint and its new signing secret."""
    errors: dict[str, str] = {}
    values = _clean(
        {
            "url": url,
            "timeout_ms": timeout_ms,
            "on_failure": on_failure,
            "mode": mode,
            "enabled": enabled,
            "accept_unsigned_answers": accept_unsigned_answers,
        },
        errors,
    )
    if errors:
        raise ValidationFailed(details=errors)
    card_product = None
    if card_product_id is not None:
        card_product = card_product_get(institution=institution, product_id=card_product_id)
    actor = current_actor()
    secret = new_secret()
    endpoint = DecisioningEndpoint(
        institution=institution,
        card_product=card_product,
        **values,
        **actor.stamp("created_by"),
        **actor.stamp("updated_by"),
    )
    endpoint.seal(secret)
    with transaction.atomic(savepoint=False):
        try:
            with transaction.atomic():  # a savepoint: the conflict leaves the transaction usable
                endpoint.save(force_insert=True)
        except IntegrityError as error:
            existing = _existing(institution, card_product)
            if existing is None:
                raise
            raise AlreadyExists(
                "This card product has its decisioning endpoint already: change it."
                if card_product is not None
                else "The institution has its decisioning endpoint already: change it.",
                details={"endpoint_id": existing},
            ) from error
        emit_for(endpoint, "decisioning_endpoint.created", data=_event_data(endpoint))
    return WithSecret(endpoint=endpoint, secret=secret)


def _existing(institution: Institution, card_product) -> str | None:
    rows = DecisioningEndpoint.objects.filter(institution=institution)
    if card_product is None:
        rows = rows.filter(card_product__isnull=True)
    else:
        rows = DecisioningEndpoint.objects.filter(card_product=card_product)
    return rows.values_list("pk", flat=True).first()


def decisioning_endpoint_update(
    *, endpoint: DecisioningEndpoint, changes: dict
) -> Outcome[DecisioningEndpoint]:
    """Change `url`, `timeout_ms`, `on_failure`, `mode`, `enabled` and
    `accept_unsigned_answers` (domain names), validated as `decisioning_endpoint_create` does.
    No change writes nothing (`Outcome.changed` false); otherwise emits
    `decisioning_endpoint.updated` naming what changed (`changed_fields`). A new `url` or
    `timeout_ms`, or `enabled` or `accept_unsigned_answers` switched, resets the circuit breaker
    (failures forgotten, no longer degraded).
    `Outcome.previous` has the old values of the fields that changed."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not decisioning endpoint fields: {sorted(unknown)}")
    errors: dict[str, str] = {}
    values = _clean(changes, errors)  # resolves the URL's host: before the lock
    if errors:
        raise ValidationFailed(details=errors)
    with transaction.atomic(savepoint=False):
        endpoint = lock_endpoint(endpoint.pk)
        previous = {
            field: getattr(endpoint, field)
            for field, value in values.items()
            if getattr(endpoint, field) != value
        }
        if not previous:
            return unchanged(endpoint)
        breaker_reset = {}
        if RESETS_BREAKER & set(previous) and (
            endpoint.consecutive_failures or endpoint.degraded_at is not None
        ):
            # A new target or deadline is not the one that failed: called again at once.
            breaker_reset = {"consecutive_failures": 0, "degraded_at": None, "next_probe_at": None}
        row_update(
            endpoint,
            {
                **{field: values[field] for field in previous},
                **breaker_reset,
                **current_actor().stamp("updated_by"),
            },
        )
        emit_for(
            endpoint,
            "decisioning_endpoint.updated",
            data={
                **_event_data(endpoint),
                "changed_fields": sorted(previous),
            },
        )
    return changed(endpoint, previous)


# --- the signing secret
def decisioning_endpoint_rotate_secret(
    *, endpoint: DecisioningEndpoint, overlap_seconds: int = DEFAULT_OVERLAP_SECONDS
) -> WithSecret:
    """A new signing secret. The one it replaces keeps signing (a second signature in each
    request) for `overlap_seconds` (0..MAX_OVERLAP_SECONDS; 0: it stops at once), so the
    program can switch its verification without failing TX's requests meanwhile. A secret
    older than that one, still in an earlier overlap, stops at once: at most two sign. Emits
    `decisioning_endpoint.secret_rotated` (never a secret). Returns the new secret, once."""
    if (
        isinstance(overlap_seconds, bool)
        or not isinstance(overlap_seconds, int)
        or not 0 <= overlap_seconds <= MAX_OVERLAP_SECONDS
    ):
        raise ValidationFailed(
            details={
                "overlap_seconds": f"Must be an integer from 0 to {MAX_OVERLAP_SECONDS} (7 days)."
            }
        )
    secret = new_secret()
    with transaction.atomic(savepoint=False):
        endpoint = lock_endpoint(endpoint.pk)
        now = timezone.now()
        if overlap_seconds:
            endpoint.seal_previous(endpoint.secret())
            endpoint.previous_secret_expires_at = now + timedelta(seconds=overlap_seconds)
        else:
            endpoint.seal_previous(None)
            endpoint.previous_secret_expires_at = None
        endpoint.seal(secret)
        stamp = current_actor().stamp("updated_by")
        for field, value in stamp.items():
            setattr(endpoint, field, value)
        endpoint.updated_at = now
        endpoint.save(
            update_fields=[
                "secret_encrypted",
                "previous_secret_encrypted",
                "previous_secret_expires_at",
                "updated_at",
                *stamp,
            ]
        )
        emit_for(
            endpoint,
            "decisioning_endpoint.secret_rotated",
            data={
                "endpoint_id": endpoint.pk,
                "previous_secret_expires_at": (
                    iso_millis(endpoint.previous_secret_expires_at) if overlap_seconds else None
                ),
            },
        )
    return WithSecret(endpoint=endpoint, secret=secret)


def signed_headers(
    *, endpoint: DecisioningEndpoint, message_id: str, body: bytes, at: datetime
) -> dict[str, str]:
    """The Standard Webhooks headers of one request at `at` (whole seconds, UTC): one `v1,`
    signature per secret that signs at that moment (`DecisioningEndpoint.secrets_at`)."""
    signatures = [
        Webhook(secret).sign(msg_id=message_id, timestamp=at, data=body.decode())
        for secret in endpoint.secrets_at(at)
    ]
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": " ".join(signatures),
    }


# --- calling the endpoint
@dataclass(frozen=True)
class CallResult:
    """What one call of a program's endpoint got. `ok`: a 2xx within the timeout, signed by the
    program for this request (`verify_answer`), whose body is a JSON object with a boolean
    `approved` (`answer`); otherwise `error` says why, in a few words (never the URL, never a
    secret)."""

    ok: bool
    status: int | None
    latency_ms: int
    error: str | None = None
    answer: dict | None = None


def call(*, endpoint: DecisioningEndpoint, message_id: str, payload: dict) -> CallResult:
    """POST `payload` (JSON), signed, to the endpoint within its `timeout_ms` (everything
    included: resolving, connecting, TLS, the answer), reading at most MAX_ANSWER_CHARS of the
    answer. A 2xx answer is taken only when the program signed it for `message_id`
    (`verify_answer`: else `unsigned answer: ...`, `invalid signature: ...`, `stale answer:
    ...` or `replayed answer: ...`), before its body is read as a decision. Never raises for
    what the network or the program does. Refuses (RuntimeError) to run inside a database
    transaction: nothing may be held while TX waits."""
    if _transaction_open():
        raise RuntimeError(
            "A decisioning endpoint is called with no database transaction open (docs/"
            "decisioning.md): commit first."
        )
    started = time.monotonic()
    try:
        # The URL rules again (a setting may have changed since the endpoint was saved). The
        # address rules are the connection's own (`core.outbound.transport` refuses a peer
        # address that is not allowed before sending a byte), and its resolution runs within
        # the call's deadline: a separate check here would resolve outside it.
        target = parse_url(endpoint.url)
    except TargetRefused as exc:
        return CallResult(
            ok=False, status=None, latency_ms=_since(started), error=f"refused: {exc}"
        )
    body = json.dumps(payload, separators=(",", ":")).encode()
    at = datetime.fromtimestamp(int(time.time()), tz=UTC)
    headers = signed_headers(endpoint=endpoint, message_id=message_id, body=body, at=at)
    outcome = transport.post(
        target.url,
        body=body,
        headers=headers,
        timeout=endpoint.timeout_ms / 1000,
        max_response_bytes=settings.WEBHOOK_MAX_RESPONSE_BYTES,
        # One character more than an answer may have: a longer one is told apart from one that
        # fits (its signature, over the whole body, could not be checked on a part of it).
        excerpt_chars=MAX_ANSWER_CHARS + 1,
        keep_headers=SIGNATURE_HEADERS,
    )
    latency = _since(started)
    if outcome.status_code is None:
        error = outcome.error
        if error.startswith("timeout"):
            error = f"timeout: no answer within {endpoint.timeout_ms} ms"
        return CallResult(ok=False, status=None, latency_ms=latency, error=error)
    if not outcome.succeeded:
        return CallResult(
            ok=False,
            status=outcome.status_code,
            latency_ms=latency,
            error=f"status {outcome.status_code}: the endpoint must answer 2xx",
        )
    text = outcome.response_excerpt
    answer = None
    if len(text) > MAX_ANSWER_CHARS:
        error = INVALID_ANSWER  # too long: a signature over the whole is not checked on a part
    else:
        # What was signed is checked before anything in it is believed.
        error = verify_answer(
            endpoint=endpoint, message_id=message_id, body=text, headers=outcome.headers, at=at
        )
        if error is None:
            answer = _answer(text)
            error = INVALID_ANSWER if answer is None else None
    if error is not None:
        return CallResult(ok=False, status=outcome.status_code, latency_ms=latency, error=error)
    return CallResult(ok=True, status=outcome.status_code, latency_ms=latency, answer=answer)


def verify_answer(
    *, endpoint: DecisioningEndpoint, message_id: str, body: str, headers: dict, at: datetime
) -> str | None:
    """Why the program's answer `body` (its text, whole) with `headers` (its Standard Webhooks
    headers, lower-case names) is not signed by the program for the request `message_id` made
    at `at`, or None when it is. The rules, in this order:

    - no `webhook-signature`: `unsigned answer` (None, taken, when the endpoint has
      `accept_unsigned_answers`);
    - no `webhook-id` or `webhook-timestamp` with it, or a timestamp that is not Unix seconds:
      `invalid signature`;
    - a timestamp more than ANSWER_TOLERANCE_SECONDS from now, either way: `stale answer`;
    - no `v1,` signature over `<webhook-id>.<webhook-timestamp>.<body>` by a secret that signed
      the request (`secrets_at(at)`: the previous one too during a rotation's overlap):
      `invalid signature` (the standardwebhooks library's verify);
    - signed, but for another `webhook-id` than `message_id`: `replayed answer` (an answer
      recorded for another authorization, increment or self-test).

    Never raises for what the program sends; the error names no secret and no header's value."""
    signature = (headers.get("webhook-signature") or "").strip()
    if not signature:
        if endpoint.accept_unsigned_answers:
            return None
        return (
            "unsigned answer: no webhook-signature (the program signs its answer with the "
            "endpoint's secret: docs/decisioning.md)"
        )
    answer_id = headers.get("webhook-id") or ""
    timestamp = headers.get("webhook-timestamp") or ""
    if not answer_id or not timestamp:
        return "invalid signature: webhook-id and webhook-timestamp must come with the signature"
    if not timestamp.isascii() or not timestamp.isdigit():
        return "invalid signature: webhook-timestamp must be Unix time in seconds"
    if abs(time.time() - int(timestamp)) > ANSWER_TOLERANCE_SECONDS:
        return (
            "stale answer: webhook-timestamp is more than "
            f"{ANSWER_TOLERANCE_SECONDS // 60} minutes from TX's clock"
        )
    signed = {
        "webhook-id": answer_id,
        "webhook-timestamp": timestamp,
        "webhook-signature": signature,
    }
    if not any(_verifies(secret, body, signed) for secret in endpoint.secrets_at(at)):
        return "invalid signature: no signature of the answer verifies with the endpoint's secret"
    if answer_id != message_id:
        return "replayed answer: signed for another message, not this request's webhook-id"
    return None


def _verifies(secret: str, body: str, headers: dict) -> bool:
    try:
        Webhook(secret).verify(body, headers, json_parse=False)
    except (WebhookVerificationError, ValueError):
        # ValueError: what the library raises on a malformed `v1,` entry (no comma, bad base64).
        return False
    return True


def _transaction_open() -> bool:
    """Whether this thread's connection is inside a transaction of the application's. The
    blocks a test case wraps around each test (`_from_testcase`, as Django's own `durable`
    check reads them) are not: a test's transaction is not one TX opened around a call."""
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def _answer(text: str) -> dict | None:
    try:
        answer = json.loads(text)
    except ValueError:
        return None
    if not isinstance(answer, dict) or not isinstance(answer.get("approved"), bool):
        return None
    return answer


def _since(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


def ask_about_authorization(
    *, endpoint: DecisioningEndpoint, authorization, available: int
) -> CallResult:
    """Ask `endpoint` for its decision on a card authorization TX holds (`authorization`,
    `available` the account's balance with its hold taken): the signed
    `authorization.request` (`decisioning.payloads.authorization_payload`), its message id the
    authorization's id (a program may deduplicate on it). No transaction may be open."""
    payload = authorization_payload(
        message_id=authorization.pk,
        endpoint_id=endpoint.pk,
        mode=endpoint.mode,
        at=timezone.now(),
        authorization=authorization,
        available=available,
    )
    return call(endpoint=endpoint, message_id=authorization.pk, payload=payload)


def ask_about_increment(*, endpoint: DecisioningEndpoint, increment, available: int) -> CallResult:
    """Ask `endpoint` for its decision on an incremental authorization TX holds (`increment`,
    `available` the account's balance with the increment held): the signed
    `authorization.increment` (`decisioning.payloads.increment_payload`), its message id the
    increment's id. No transaction may be open."""
    payload = increment_payload(
        message_id=increment.pk,
        endpoint_id=endpoint.pk,
        mode=endpoint.mode,
        at=timezone.now(),
        increment=increment,
        available=available,
    )
    return call(endpoint=endpoint, message_id=increment.pk, payload=payload)


def decisioning_endpoint_test(*, endpoint: DecisioningEndpoint) -> CallResult:
    """The self-test: POST a signed `decisioning.test` request (`{type, id, endpointId,
    createdAt}`) to the endpoint as an authorization would be sent, and report whether the
    answer would have been accepted (`CallResult`). Writes nothing, emits nothing, also for a
    disabled endpoint (to test it before enabling it). No transaction may be open. The call
    holds one of its institution's slots (`decisioning.calls`, shared with its authorizations):
    429 `rate_limited` (RateLimited, retry after the longest call) when they are all taken,
    and the endpoint is not called."""
    endpoint = DecisioningEndpoint.objects.get(pk=endpoint.pk)  # with its secrets
    message_id = new_id("dct")
    payload = test_payload(message_id=message_id, endpoint_id=endpoint.pk, at=timezone.now())
    with calls.scope():
        if not calls.take(institution_id=endpoint.institution_id, call_id=message_id):
            raise RateLimited(SELF_TEST_BUSY, retry_after=calls.RETRY_AFTER)
        return call(endpoint=endpoint, message_id=message_id, payload=payload)


# --- validation
def _clean(values: dict, errors: dict) -> dict:
    cleaned = {}
    if "url" in values:
        try:
            cleaned["url"] = check_url(values["url"]).url
        except TargetRefused as exc:
            errors["url"] = str(exc)
    if "timeout_ms" in values:
        value = values["timeout_ms"]
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not MIN_TIMEOUT_MS <= value <= MAX_TIMEOUT_MS
        ):
            errors["timeout_ms"] = f"Must be an integer from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}."
        else:
            cleaned["timeout_ms"] = value
    for field, choices in (
        ("on_failure", DecisioningEndpoint.OnFailure.values),
        ("mode", DecisioningEndpoint.Mode.values),
    ):
        if field in values:
            if values[field] not in choices:
                errors[field] = f"Must be one of {', '.join(choices)}."
            else:
                cleaned[field] = values[field]
    for field in ("enabled", "accept_unsigned_answers"):
        if field in values:
            if not isinstance(values[field], bool):
                errors[field] = "Must be true or false."
            else:
                cleaned[field] = values[field]
    return cleaned
