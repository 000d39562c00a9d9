"""Idempotent writes: POST /customers and PATCH /customers/{id} (spec 4.1, docs/design.md
section 6).

Scope (institution, key); fingerprint method + path + canonical JSON body. A replay is the
original response byte for byte with `Idempotent-Replayed: true`; nothing runs twice, not even
when two requests with one key race.
"""

import base64
import hashlib
import io
import json
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone

from api import idempotency
from api.models import IdempotencyRecord
from core.exceptions import BusinessRuleViolation
from core.reencryption import sensitive_data_reencrypt
from customers.models import Customer
from events.models import Event
from tests.accounts.api.helpers import product_rid
from tests.conftest import Api, body_of, error_of
from tests.factories import issue_key

CUSTOMER = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}
OTHER_CUSTOMER = {"firstName": "Grace", "lastName": "Hopper", "countryId": "840"}
REUSED = {
    "code": "idempotency_key_reused",
    "message": "This Idempotency-Key was already used with a different request.",
}
MISSING = {
    "code": "idempotency_key_missing",
    "message": "The Idempotency-Key header is required on POST and PATCH.",
}
INVALID = {
    "code": "idempotency_key_invalid",
    "message": "The Idempotency-Key header must be a UUID v4.",
}
IN_USE = {
    "code": "idempotency_key_in_use",
    "message": "A request with this Idempotency-Key is still being processed. Retry later.",
}


def created_status(version):
    return 201 if version == "v2" else 200


def events(event_type):
    return Event.objects.filter(type=event_type).count()


def assert_replay_of(replay, original):
    """`replay` is `original` byte for byte, marked as replayed."""
    assert replay.status_code == original.status_code
    assert replay.content == original.content
    assert replay["Content-Type"] == "application/json"
    assert replay["Idempotent-Replayed"] == "true"
    assert not original.has_header("Idempotent-Replayed")
    # The replay is a request of its own (its own X-Request-Id); its body keeps the original meta.
    assert replay["X-Request-Id"] != original["X-Request-Id"]
    assert replay.json()["meta"]["tranId"] == original["X-Request-Id"]


def assert_fresh(response, version):
    assert response.status_code == created_status(version), response.content
    assert not response.has_header("Idempotent-Replayed")


def create_customer(api, body=CUSTOMER):
    response = api.post("/customers", body)
    assert response.status_code == created_status(api.version), response.content
    return body_of(response, api.version)["customerId"]


# --- replay ------------------------------------------------------------------------------------


def test_post_replay_is_byte_identical_and_runs_once(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert_fresh(first, api.version)
    second = api.post("/customers", CUSTOMER, idempotency_key=key)
    third = api.post("/customers", CUSTOMER, idempotency_key=key)

    assert_replay_of(second, first)
    assert_replay_of(third, first)
    assert Customer.objects.count() == 1
    assert events("customer.created") == 1
    assert IdempotencyRecord.objects.count() == 1


def test_replay_ignores_key_order_and_whitespace(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    reordered = '{ "countryId": "826",\n  "lastName": "Lovelace", "firstName": "Ada" }'
    assert_replay_of(api.post("/customers", reordered, idempotency_key=key), first)
    assert Customer.objects.count() == 1


def test_key_is_case_insensitive_uuid(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=str(key))
    second = api.post("/customers", CUSTOMER, idempotency_key=str(key).upper())
    assert_replay_of(second, first)


def test_patch_replay_does_not_run_again(api):
    customer_id = create_customer(api)
    key = uuid.uuid4()
    first = api.patch(f"/customers/{customer_id}", {"firstName": "Augusta"}, idempotency_key=key)
    assert first.status_code == 200, first.content
    assert body_of(first, api.version)["firstName"] == "Augusta"

    # Someone else changes the customer; replaying the first PATCH must not undo that.
    assert api.patch(f"/customers/{customer_id}", {"firstName": "Ada"}).status_code == 200
    replay = api.patch(f"/customers/{customer_id}", {"firstName": "Augusta"}, idempotency_key=key)

    assert_replay_of(replay, first)
    assert Customer.objects.get().first_name == "Ada"
    assert events("customer.updated") == 2


# --- reuse and validation of the key -----------------------------------------------------------


def test_same_key_different_body_is_422(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    response = api.post("/customers", OTHER_CUSTOMER, idempotency_key=key)
    assert response.status_code == 422
    assert error_of(response, api.version) == REUSED
    assert not response.has_header("Idempotent-Replayed")
    assert Customer.objects.count() == 1
    # The refusal changed nothing: the original request still replays.
    assert_replay_of(api.post("/customers", CUSTOMER, idempotency_key=key), first)


def test_same_key_on_a_different_path_is_422(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    customer_id = body_of(first, api.version)["customerId"]
    response = api.patch(f"/customers/{customer_id}", CUSTOMER, idempotency_key=key)
    assert response.status_code == 422
    assert error_of(response, api.version) == REUSED


def test_same_key_same_path_different_method_is_422(api_v1):
    # v1 takes POST to /customers/{id} as PATCH; the method still belongs to the fingerprint.
    customer_id = create_customer(api_v1)
    key = uuid.uuid4()
    path = f"/customers/{customer_id}"
    assert api_v1.patch(path, {"firstName": "B"}, idempotency_key=key).status_code == 200
    response = api_v1.post(path, {"firstName": "B"}, idempotency_key=key)
    assert response.status_code == 422
    assert error_of(response, "v1") == REUSED


@pytest.mark.parametrize("header", [None, "", "   "])
def test_v2_write_without_key_is_400(api_v2, header):
    customer_id = create_customer(api_v2)
    headers = {"Idempotency-Key": header} if header is not None else None
    for response in (
        api_v2.post("/customers", CUSTOMER, idempotency_key=None, headers=headers),
        api_v2.patch(
            f"/customers/{customer_id}", {"firstName": "B"}, idempotency_key=None, headers=headers
        ),
    ):
        assert response.status_code == 400
        assert response.json() == MISSING
    assert Customer.objects.get().first_name == "Ada"


@pytest.mark.parametrize(
    "bad_key",
    [
        "not-a-uuid",
        "12345",
        # Named: a fresh value would give each pytest-xdist worker a different test id.
        pytest.param(str(uuid.uuid4())[:-1], id="uuid4-truncated"),
        pytest.param(str(uuid.uuid1()), id="uuid1"),
        str(uuid.uuid3(uuid.NAMESPACE_DNS, "tx")),
        "00000000-0000-0000-0000-000000000000",
        "00000000-0000-4000-0000-000000000000",  # version 4 bits, but not the RFC 4122 variant
    ],
)
def test_invalid_key_is_400(api, bad_key):
    response = api.post("/customers", CUSTOMER, idempotency_key=bad_key)
    assert response.status_code == 400
    assert error_of(response, api.version) == INVALID
    assert Customer.objects.count() == 0


@pytest.mark.parametrize("header", ["", "   "])
def test_v1_blank_key_is_invalid_not_ignored(api_v1, header):
    # The client asked for idempotency; running the write without it would be the risky reading.
    response = api_v1.post(
        "/customers", CUSTOMER, idempotency_key=None, headers={"Idempotency-Key": header}
    )
    assert response.status_code == 400
    assert error_of(response, "v1") == INVALID
    assert Customer.objects.count() == 0


def test_v1_without_key_runs_every_time(api_v1):
    first = api_v1.post("/customers", CUSTOMER, idempotency_key=None)
    second = api_v1.post("/customers", CUSTOMER, idempotency_key=None)
    for response in (first, second):
        assert_fresh(response, "v1")
    assert first.json()["data"]["customerId"] != second.json()["data"]["customerId"]
    assert Customer.objects.count() == 2
    assert IdempotencyRecord.objects.count() == 0


# --- what is stored, and what leaves the key usable --------------------------------------------


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        (json.dumps({"firstName": "Ada"}), "application/json", 400),
        ('{"firstName": ', "application/json", 400),
        ("firstName=Ada", "text/plain", 415),
    ],
)
def test_rejected_request_leaves_key_usable(api, raw, content_type, status):
    key = uuid.uuid4()
    rejected = api.post("/customers", raw, idempotency_key=key, content_type=content_type)
    assert rejected.status_code == status
    assert IdempotencyRecord.objects.count() == 0

    response = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert_fresh(response, api.version)
    assert Customer.objects.count() == 1


def test_crash_mid_request_leaves_key_usable(api, monkeypatch):
    import customers.apis

    real = customers.apis.customer_create

    def create_then_crash(**kwargs):
        real(**kwargs)
        raise RuntimeError("crash after the write")

    key = uuid.uuid4()
    monkeypatch.setattr(customers.apis, "customer_create", create_then_crash)
    assert api.post("/customers", CUSTOMER, idempotency_key=key).status_code == 500
    assert Customer.objects.count() == 0
    assert events("customer.created") == 0
    assert IdempotencyRecord.objects.count() == 0

    monkeypatch.setattr(customers.apis, "customer_create", real)
    assert_fresh(api.post("/customers", CUSTOMER, idempotency_key=key), api.version)
    assert Customer.objects.count() == 1


def test_the_operation_runs_without_the_key_wait_bound(api_v2, monkeypatch):
    """The lock_timeout that bounds the wait for a key must not bound the operation's own row
    locks (a hot account may make a transfer wait longer than a retry should)."""
    import customers.apis

    real = customers.apis.customer_create
    seen = {}

    def create_and_look(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            seen["lock_timeout"] = cursor.fetchone()[0]
        return real(**kwargs)

    monkeypatch.setattr(customers.apis, "customer_create", create_and_look)
    assert api_v2.post("/customers", CUSTOMER).status_code == 201
    assert seen == {"lock_timeout": "0"}


class RuleBroken(BusinessRuleViolation):
    code = "test_rule_broken"
    message = "A test business rule said no."


def test_business_refusal_is_stored_and_replayed(api, monkeypatch):
    import customers.apis

    real = customers.apis.customer_create
    calls = []

    def create_then_refuse(**kwargs):
        calls.append(kwargs)
        real(**kwargs)  # a partial write the refusal must undo
        raise RuleBroken(details={"rule": "test"})

    monkeypatch.setattr(customers.apis, "customer_create", create_then_refuse)
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert first.status_code == 422
    assert error_of(first, api.version) == {
        "code": "test_rule_broken",
        "message": "A test business rule said no.",
        "details": {"rule": "test"},
    }
    assert Customer.objects.count() == 0
    assert events("customer.created") == 0
    record = IdempotencyRecord.objects.get()
    assert record.status_code == 422
    assert idempotency.opened(record.pk, bytes(record.response_body)) == first.content

    second = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert second.status_code == 422
    assert second.content == first.content
    assert second["Idempotent-Replayed"] == "true"
    assert len(calls) == 1


def test_keys_are_scoped_per_institution(version, key, other_institution):
    api = Api(version, key[1])
    other_api = Api(version, issue_key(other_institution)[1])
    shared = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=shared)
    other = other_api.post("/customers", CUSTOMER, idempotency_key=shared)

    assert_fresh(first, version)
    assert_fresh(other, version)
    assert body_of(first, version)["customerId"] != body_of(other, version)["customerId"]
    assert Customer.objects.filter(institution=key[0].institution).count() == 1
    assert Customer.objects.filter(institution=other_institution).count() == 1
    # ... and each still replays its own response.
    assert_replay_of(api.post("/customers", CUSTOMER, idempotency_key=shared), first)
    assert_replay_of(other_api.post("/customers", CUSTOMER, idempotency_key=shared), other)


def test_keys_of_two_api_keys_of_one_institution_share_a_scope(version, institution, key):
    shared = uuid.uuid4()
    first = Api(version, key[1]).post("/customers", CUSTOMER, idempotency_key=shared)
    second_api = Api(version, issue_key(institution)[1])
    assert_replay_of(second_api.post("/customers", CUSTOMER, idempotency_key=shared), first)


# --- stored responses are encrypted (docs/api-contract.md) ---------------------------------------

OLD_KEYS = "old:" + base64.b64encode(b"o" * 32).decode()
NEW_KEYS = "new:" + base64.b64encode(b"n" * 32).decode()


def stored_body(key) -> bytes:
    """The response body of `key`'s record as the database holds it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT response_body FROM api_idempotencyrecord WHERE key = %s", [key])
        (body,) = cursor.fetchone()
    return bytes(body)


def open_account_once(api, key):
    customer_id = create_customer(api, dict(CUSTOMER, nationalId="QX-5518-7734"))
    body = {"customerId": customer_id, "productRid": product_rid(api)}
    response = api.post("/accounts", body, idempotency_key=key)
    assert response.status_code == created_status(api.version), response.content
    return body, response


def test_the_stored_response_holds_no_account_number_and_no_cleartext(api):
    key = uuid.uuid4()
    body, first = open_account_once(api, key)
    account = body_of(first, api.version)

    stored = stored_body(key)
    assert stored.startswith(b"sealed:dev1:")
    for clear in (account["accountNumber"], account["accountId"], "accountNumber", "meta"):
        assert clear.encode() not in stored
    # No record of the table keeps a body in clear (the customer's holds its id's last four).
    for record in IdempotencyRecord.objects.all():
        assert bytes(record.response_body).startswith(b"sealed:dev1:")
        assert b"7734" not in bytes(record.response_body)
    assert_replay_of(api.post("/accounts", body, idempotency_key=key), first)


def test_a_stored_response_copied_to_another_record_does_not_decrypt(api):
    first = api.post("/customers", CUSTOMER, idempotency_key=(one := uuid.uuid4()))
    api.post("/customers", OTHER_CUSTOMER, idempotency_key=(other := uuid.uuid4()))
    IdempotencyRecord.objects.filter(key=other).update(response_body=stored_body(one))

    assert_replay_of(api.post("/customers", CUSTOMER, idempotency_key=one), first)
    # Bound to its record: never another request's answer (the record is unusable: a 500).
    copied = api.post("/customers", OTHER_CUSTOMER, idempotency_key=other)
    assert copied.status_code == 500
    assert error_of(copied, api.version)["code"] == "internal_error"


def test_key_rotation_reencrypts_stored_responses_and_replays_stay_identical(api):
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD_KEYS):
        sealed_key, clear_key = uuid.uuid4(), uuid.uuid4()
        sealed_body, sealed_first = open_account_once(api, sealed_key)
        clear_body, clear_first = open_account_once(api, clear_key)
    # As it was stored before responses were encrypted: replayed as it is until its 24 hours
    # are over, or until a rotation encrypts it.
    IdempotencyRecord.objects.filter(key=clear_key).update(response_body=clear_first.content)
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD_KEYS):
        assert_replay_of(api.post("/accounts", clear_body, idempotency_key=clear_key), clear_first)
    records = IdempotencyRecord.objects.count()  # the customers' and the accounts'

    with override_settings(FIELD_ENCRYPTION_KEYS=f"{NEW_KEYS},{OLD_KEYS}"):
        report = sensitive_data_reencrypt()
        assert report.counts["idempotency_records"] == records
        assert report.remaining == 0
        assert sensitive_data_reencrypt().counts["idempotency_records"] == 0

    assert stored_body(clear_key).startswith(b"sealed:new:")
    for record in IdempotencyRecord.objects.all():
        assert bytes(record.response_body).startswith(b"sealed:new:")
    # The old key can go.
    with override_settings(FIELD_ENCRYPTION_KEYS=NEW_KEYS):
        assert_replay_of(
            api.post("/accounts", sealed_body, idempotency_key=sealed_key), sealed_first
        )
        assert_replay_of(api.post("/accounts", clear_body, idempotency_key=clear_key), clear_first)


# --- the 24-hour window ------------------------------------------------------------------------


def age_records(hours):
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=hours))


def purge():
    out = io.StringIO()
    call_command("purge_idempotency_keys", stdout=out)
    return out.getvalue()


def test_purge_deletes_old_records_and_the_key_is_new_again(api):
    key = uuid.uuid4()
    api.post("/customers", CUSTOMER, idempotency_key=key)
    age_records(25)

    assert purge() == "Purged 1 idempotency key(s).\n"
    assert IdempotencyRecord.objects.count() == 0

    assert_fresh(api.post("/customers", CUSTOMER, idempotency_key=key), api.version)
    assert Customer.objects.count() == 2


def test_purge_keeps_records_inside_the_window(api):
    key = uuid.uuid4()
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    age_records(23)

    assert purge() == "Purged 0 idempotency key(s).\n"
    assert_replay_of(api.post("/customers", CUSTOMER, idempotency_key=key), first)


def test_expired_record_not_yet_purged_counts_as_new(api):
    key = uuid.uuid4()
    api.post("/customers", CUSTOMER, idempotency_key=key)
    age_records(25)

    # A different body too: the old request no longer binds the key.
    response = api.post("/customers", OTHER_CUSTOMER, idempotency_key=key)
    assert_fresh(response, api.version)
    assert Customer.objects.count() == 2
    record = IdempotencyRecord.objects.get()
    assert record.created_at > timezone.now() - timedelta(hours=1)
    assert_replay_of(api.post("/customers", OTHER_CUSTOMER, idempotency_key=key), response)


# --- concurrency: real threads, real transactions ----------------------------------------------


class Gate:
    """Wraps `customers.apis.customer_create`: the first call blocks until released."""

    def __init__(self, monkeypatch, *, fail_first=False):
        import customers.apis

        self.real = customers.apis.customer_create
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self.fail_first = fail_first
        monkeypatch.setattr(customers.apis, "customer_create", self)

    def __call__(self, **kwargs):
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(10), "the test never released the first request"
            if self.fail_first:
                raise RuntimeError("the first request crashes")
        return self.real(**kwargs)


def post_in_thread(secret, key, body=CUSTOMER):
    """Start a v2 POST /customers on its own thread, connection and transaction."""
    result = {}

    def run():
        try:
            result["response"] = Client(REMOTE_ADDR="127.0.0.1").post(
                "/TX/v2/customers",
                data=json.dumps(body),
                content_type="application/json",
                headers={"x-api-key": secret, "Idempotency-Key": str(key)},
            )
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def wait_for_lock_waiter(timeout=5.0):
    """Block until some other backend of this database waits on a lock (the second request)."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0] > 0:
                return
            time.sleep(0.01)
        cursor.execute(
            "SELECT pid, state, wait_event_type, wait_event, left(query, 100) "
            "FROM pg_stat_activity WHERE datname = current_database()"
        )
        activity = cursor.fetchall()
    raise AssertionError(f"the second request never waited for the first: {activity}")


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_run_once(monkeypatch, key):
    gate = Gate(monkeypatch)
    idem = uuid.uuid4()
    first, first_result = post_in_thread(key[1], idem)
    assert gate.entered.wait(5)
    second, second_result = post_in_thread(key[1], idem)
    wait_for_lock_waiter()
    gate.release.set()
    first.join(10)
    second.join(10)

    a, b = first_result["response"], second_result["response"]
    assert a.status_code == b.status_code == 201
    assert a.content == b.content
    assert not a.has_header("Idempotent-Replayed")
    assert b["Idempotent-Replayed"] == "true"
    assert gate.calls == 1
    assert Customer.objects.count() == 1
    assert events("customer.created") == 1


@pytest.mark.django_db(transaction=True)
def test_second_request_gets_409_when_the_wait_runs_out(settings, monkeypatch, key):
    settings.IDEMPOTENCY_WAIT_SECONDS = 0.2
    gate = Gate(monkeypatch)
    idem = uuid.uuid4()
    first, first_result = post_in_thread(key[1], idem)
    assert gate.entered.wait(5)

    started = time.monotonic()
    second = Api("v2", key[1]).post("/customers", CUSTOMER, idempotency_key=idem)
    waited = time.monotonic() - started
    gate.release.set()
    first.join(10)

    assert second.status_code == 409
    assert second.json() == IN_USE
    assert second["Retry-After"] == "1"
    assert 0.2 <= waited < 3
    a = first_result["response"]
    assert_fresh(a, "v2")
    # The 409 was not stored: the key now replays the first request's response.
    assert_replay_of(Api("v2", key[1]).post("/customers", CUSTOMER, idempotency_key=idem), a)
    assert gate.calls == 1
    assert Customer.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_waiting_request_runs_itself_when_the_first_crashes(monkeypatch, key):
    gate = Gate(monkeypatch, fail_first=True)
    idem = uuid.uuid4()
    first, first_result = post_in_thread(key[1], idem)
    assert gate.entered.wait(5)
    second, second_result = post_in_thread(key[1], idem)
    wait_for_lock_waiter()
    gate.release.set()
    first.join(10)
    second.join(10)

    assert first_result["response"].status_code == 500
    assert_fresh(second_result["response"], "v2")
    assert gate.calls == 2
    assert Customer.objects.count() == 1
    assert IdempotencyRecord.objects.get().status_code == 201


def test_fingerprint_is_keyed_not_a_plain_hash_of_the_body(api_v2, institution):
    body = dict(CUSTOMER, nationalId="AB1234")
    idem = uuid.uuid4()
    assert api_v2.post("/customers", body, idempotency_key=idem).status_code == 201

    record = IdempotencyRecord.objects.get(institution=institution, key=idem)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    plain = hashlib.sha256(f"POST\n/TX/v2/customers\n{canonical}".encode()).hexdigest()
    assert len(record.fingerprint) == 64
    assert record.fingerprint != plain


# --- SECRET_KEY rotation (docs/deployment.md) ------------------------------------------------


def test_a_record_stored_before_a_secret_key_rotation_replays_under_its_fallback(api, settings):
    key = uuid.uuid4()
    settings.SECRET_KEY = "the-key-before-the-rotation-0123456789"
    first = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert_fresh(first, api.version)

    settings.SECRET_KEY = "the-key-after-the-rotation-0123456789"
    # Without the old key among the fallbacks the stored fingerprint is another request's.
    settings.SECRET_KEY_FALLBACKS = []
    refused = api.post("/customers", CUSTOMER, idempotency_key=key)
    assert refused.status_code == 422
    assert error_of(refused, api.version) == REUSED

    settings.SECRET_KEY_FALLBACKS = ["the-key-before-the-rotation-0123456789"]
    assert_replay_of(api.post("/customers", CUSTOMER, idempotency_key=key), first)
    # Another body under the same key is still another request, whichever key made the record.
    other = api.post("/customers", OTHER_CUSTOMER, idempotency_key=key)
    assert other.status_code == 422
    assert error_of(other, api.version) == REUSED
    assert Customer.objects.count() == 1
