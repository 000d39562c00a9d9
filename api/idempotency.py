"""Idempotent writes (spec 4.1, docs/design.md section 6), applied by `TXView` to every POST and
PATCH.

The scope of a key is (institution, key); the fingerprint is method + path + the canonical JSON
of the parsed body. The record is inserted in the same database transaction as the operation it
guards, so it commits with the operation or not at all:

* a second request with the same key blocks on the record's unique index while the first runs,
  then replays what the first stored, or, if the first rolled back, runs itself; it waits at most
  IDEMPOTENCY_WAIT_SECONDS (PostgreSQL's `lock_timeout`) before answering 409
  `idempotency_key_in_use`. Nothing runs twice;
* results stored for replay: every 2xx, and the business answers 409 `invalid_state_transition`
  and 422 (the operation ran and decided). Everything else (400, 401, 403, 404, 413, 415, 429,
  5xx) rolls the record back with the operation, and the key stays usable;
* a record older than IDEMPOTENCY_TTL_HOURS counts as absent, and `purge_idempotency_keys`
  deletes it;
* every stored response is encrypted (`core.crypto`, the field keys, bound to its record):
  bodies hold account numbers, national ids' last four, webhook signing secrets shown once and
  card data, and the table keeps none of them in clear; the replay decrypts and answers the
  same bytes. The records join key rotation (`api.reencryption`). A body stored in clear before
  encryption began (it starts with `{`, never with `SEALED`) is replayed as it is until its 24
  hours are over; `reencrypt_sensitive_data` encrypts such bodies at once (docs/api-contract.md).
"""

import hmac
import json
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.http import HttpResponse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from api.models import IdempotencyRecord
from core import crypto
from core.exceptions import (
    IdempotencyKeyInUse,
    IdempotencyKeyInvalid,
    IdempotencyKeyMissing,
    IdempotencyKeyReused,
    InvalidStateTransition,
    TXError,
)
from core.metrics import IDEMPOTENT_REPLAYS
from institutions.scopes import require_scope

HEADER = "HTTP_IDEMPOTENCY_KEY"
REPLAYED_HEADER = "Idempotent-Replayed"
WRITE_METHODS = frozenset({"POST", "PATCH"})
SEALED = b"sealed:"  # a stored body that is encrypted (JSON never starts so)


def is_stored_status(status: int) -> bool:
    return 200 <= status < 300 or status == 422 or status == InvalidStateTransition.status


def is_stored_error(error: TXError) -> bool:
    return error.status == 422 or isinstance(error, InvalidStateTransition)


def parse_key(request, *, required: bool) -> uuid.UUID | None:
    raw = request.META.get(HEADER)
    if raw is None or raw.strip() == "":
        if required:
            raise IdempotencyKeyMissing()
        if raw is not None:
            # v1: a client that sends the header wants idempotency; running its write without
            # it because the value is blank would be the dangerous reading.
            raise IdempotencyKeyInvalid()
        return None
    try:
        key = uuid.UUID(raw.strip())
    except ValueError:
        raise IdempotencyKeyInvalid() from None
    if key.version != 4 or key.variant != uuid.RFC_4122:
        raise IdempotencyKeyInvalid()
    return key


def fingerprint(method: str, path: str, data, *, secret: str | None = None) -> str:
    """A keyed hash (HMAC-SHA256 under SECRET_KEY, or `secret`): bodies carry national ids and,
    later, PANs, and a plain hash of a body whose other fields are known would let a reader of
    the table guess a short secret field by brute force."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    message = f"{method}\n{path}\n{canonical}"
    return salted_hmac(
        "tx.idempotency.fingerprint", message, secret=secret, algorithm="sha256"
    ).hexdigest()


def same_request(stored: str, request_fingerprint: str, method: str, path: str, data) -> bool:
    """Whether a stored fingerprint is this request's: under SECRET_KEY, or under one of
    SECRET_KEY_FALLBACKS (a record stored before the key was rotated, within its 24 hours;
    docs/deployment.md). The fallbacks are tried only when the current key does not match."""
    if hmac.compare_digest(stored, request_fingerprint):
        return True
    return any(
        hmac.compare_digest(stored, fingerprint(method, path, data, secret=old))
        for old in settings.SECRET_KEY_FALLBACKS
    )


# The claim (api/sql/idempotency.sql): the record's id, or NULL when a live record of another
# request holds the key (while that request's transaction is still open, PostgreSQL makes this
# statement wait for it to end, at most IDEMPOTENCY_WAIT_SECONDS).
_CLAIM_SQL = "SELECT tx_idempotency_claim(%s, %s, %s, %s, %s, %s, %s)"


def claim(*, institution_id: str, key: uuid.UUID, fingerprint: str, method: str, path: str):
    """Insert the record inside the current transaction and return its id, or, when the key is
    already taken, wait for its owner to finish and return the committed record."""
    wait_ms = max(1, int(settings.IDEMPOTENCY_WAIT_SECONDS * 1000))
    with connection.cursor() as cursor:
        try:
            cursor.execute(
                _CLAIM_SQL,
                [
                    f"{wait_ms}ms",
                    institution_id,
                    key,
                    fingerprint,
                    method,
                    path,
                    settings.IDEMPOTENCY_TTL_HOURS,
                ],
            )
            (claimed,) = cursor.fetchone()
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) == "55P03":  # lock_not_available
                raise IdempotencyKeyInUse() from None
            raise
    if claimed is not None:
        return claimed
    return IdempotencyRecord.objects.get(institution_id=institution_id, key=key)


def replay(record: IdempotencyRecord, request_fingerprint: str, request) -> HttpResponse:
    """The stored answer of `record`, when `request` (its fingerprint given) is the same request
    as the one stored; else 422 `idempotency_key_reused`."""
    # Records are the institution's, not one key's: another key of it replaying the request
    # passed the operation's scope already (same method and path), and needs what the body
    # added (a PAN, credit) as the first key did, or the replay would hand it an answer it
    # could not have asked for (a sealed secret, a full PAN's transfer).
    check_same_request(record, request_fingerprint, request)
    body = opened(record.pk, bytes(record.response_body))
    response = HttpResponse(body, status=record.status_code, content_type="application/json")
    response[REPLAYED_HEADER] = "true"
    IDEMPOTENT_REPLAYS.inc()  # at once: a replay writes nothing that a rollback could undo
    return response


def store(record_id: int, response, request) -> bool:
    """Store `response` as the record's answer; False (nothing written) when it has one
    already (a request that answers after its first commit, resumed by a retry meanwhile:
    `api.views.Continued`)."""
    body = sealed(record_id, response.content)
    body_scopes = " ".join(sorted(getattr(request, "tx_body_scopes", ())))
    # A plain statement: the ORM would compile this UPDATE again on every write request.
    with connection.cursor() as cursor:
        cursor.execute(_STORE_SQL, [response.status_code, body, body_scopes, record_id])
        return cursor.rowcount == 1


def continue_later(record_id: int, resource_id: str, request) -> None:
    """Commit the record without its answer, naming the object the request created (and the
    scopes its body added): a retry before the answer is stored resumes from it
    (`api.views.TXView.resume`)."""
    IdempotencyRecord.objects.filter(pk=record_id).update(
        resource_id=resource_id,
        body_scopes=" ".join(sorted(getattr(request, "tx_body_scopes", ()))),
    )


def check_same_request(record: IdempotencyRecord, request_fingerprint: str, request) -> None:
    """422 `idempotency_key_reused` unless `request` is the one `record` was claimed for, and
    403 unless its key holds the scopes that request's body added (`replay`)."""
    if not same_request(
        record.fingerprint, request_fingerprint, request.method, request.path, request.data
    ):
        raise IdempotencyKeyReused()
    for scope in record.body_scopes.split():
        require_scope(request, scope)


def sealed(record_id: int, body: bytes) -> bytes:
    """`body` (a JSON response, UTF-8) as record `record_id` stores it: encrypted under the
    newest field key, bound to the record."""
    return SEALED + crypto.encrypt(body.decode(), context=_context(record_id)).encode()


def opened(record_id: int, stored: bytes) -> bytes:
    """The response body record `record_id` stores as `stored`, as it was answered: decrypted,
    or as it is when it was stored in clear (before encryption began: JSON, never `SEALED`)."""
    if not stored.startswith(SEALED):
        return stored
    return crypto.decrypt(stored[len(SEALED) :].decode(), context=_context(record_id)).encode()


_STORE_SQL = (
    "UPDATE api_idempotencyrecord SET status_code = %s, response_body = %s, body_scopes = %s"
    " WHERE id = %s AND status_code IS NULL"
)


def _context(record_id: int) -> str:
    return f"api.IdempotencyRecord.response_body:{record_id}"


def idempotency_keys_purge(*, older_than_hours: int | None = None) -> int:
    """Delete idempotency records older than the replay window; return how many."""
    hours = settings.IDEMPOTENCY_TTL_HOURS if older_than_hours is None else older_than_hours
    cutoff = timezone.now() - timedelta(hours=hours)
    with transaction.atomic():
        deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
