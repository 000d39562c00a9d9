"""No full PAN, CVV or PIN outside /sensitive-details. One scenario touches every card endpoint
(and card transfers, joint accounts, events, listings, errors, replays) in the parametrized
version; then the logs (every record at DEBUG, SQL included), every response made without the
`cards:sensitive` scope, the idempotency records and a text dump of every table are searched.

The PINs have 8 digits, so that no timestamp, id or hash can hold one by chance; the CVV has
only 3, so it is checked by where it can be decrypted from rather than by a text search."""

import json
import logging
import re

import pytest
from django.db import connection

from api import idempotency
from api.jsonlog import JsonFormatter
from api.models import IdempotencyRecord
from cards.models import Card, SensitiveDetailsAccess
from core import crypto
from institutions import scopes as api_scopes
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import (
    CREATED,
    CURRENT_ACCOUNT,
    DEBIT,
    account,
    address,
    assert_error,
    customer,
    issue,
    joint_path,
    new_key,
    product_rid,
)

PIN = "91827364"
NEW_PIN = "46381927"
WRONG_PIN = "73918264"
PINS = (PIN, NEW_PIN, WRONG_PIN)
CIPHERTEXT = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9+/]+=*$")

SENSITIVE_SCOPE = {"requiredScope": "cards:sensitive"}


class Recording(Api):
    """An Api client that keeps every response it gets."""

    def __init__(self, version, key):
        super().__init__(version, key)
        self.responses = []

    def get(self, *args, **kwargs):
        response = super().get(*args, **kwargs)
        self.responses.append(response)
        return response

    def _write(self, *args, **kwargs):
        response = super()._write(*args, **kwargs)
        self.responses.append(response)
        return response


class Collector(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def logs():
    """Every log record of every logger at DEBUG, the SQL of every query included."""
    collector = Collector()
    root = logging.getLogger()
    saved = {}
    names = ["", "django", "django.request", "django.server", "django.db.backends", "tx"]
    for name in names:
        logger = logging.getLogger(name)
        saved[name] = logger.level
        logger.setLevel(logging.DEBUG)
    root.addHandler(collector)
    debug_cursor = connection.force_debug_cursor
    connection.force_debug_cursor = True
    try:
        yield collector.records
    finally:
        connection.force_debug_cursor = debug_cursor
        root.removeHandler(collector)
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def scenario(api: Recording, sensitive: Api, pan_api: Recording) -> list:
    """Touch every card endpoint; returns the /sensitive-details responses. Operations that take
    a full PAN go through `pan_api` (they need `cards:sensitive`); its answers are searched too."""
    version = api.version
    reads = []

    def read(card_id):
        response = sensitive.get(f"/cards/{card_id}/sensitive-details")
        assert response.status_code == 200, response.content
        reads.append(response)
        return response.json()["data"] if version == "v1" else response.json()

    def ok(response, status=200):
        assert response.status_code == status, response.content
        return response.json()["data"] if version == "v1" else response.json()

    created_status = CREATED[version]
    api.get("/products/cards")
    api.get("/products/accounts")
    ada, bob = customer(api, via_http=True), customer(api, "Bob", "Builder", via_http=True)
    prepaid = account(api, ada, load=50_000, via_http=True)
    current = account(api, ada, CURRENT_ACCOUNT, load=20_000, via_http=True)
    bob_acc = account(api, bob, via_http=True)

    # Issue: virtual prepaid, physical debit, supplementary.
    card = issue(api, prepaid, ada, status="active")["cardId"]
    plastic = issue(
        api,
        current,
        ada,
        DEBIT,
        form="physical",
        deliveryAddress=address(version),
        status="active",
    )["cardId"]
    supplementary = ok(
        api.post(
            "/cards",
            {
                "primaryCardId": plastic,
                "customerId": bob,
                "form": "virtual",
                "cardProductRid": product_rid(api, DEBIT),
            },
        ),
        created_status,
    )["cardId"]
    pan = read(card)["pan"]
    plastic_pan = read(plastic)["pan"]
    read(supplementary)

    # Reads and lookups.
    api.get(f"/cards/{card}")
    api.get("/cards")
    api.get("/cards", {"accountId": current})
    ok(pan_api.post("/card-lookups", {"pan": pan}))
    # The same lookup replayed from its idempotency record.
    key = new_key()
    pan_api.post("/card-lookups", {"pan": plastic_pan}, idempotency_key=key)
    pan_api.post("/card-lookups", {"pan": plastic_pan}, idempotency_key=key)
    assert_error(
        api.get(f"/cards/{card}/sensitive-details"),
        version,
        403,
        "permission_denied",
        SENSITIVE_SCOPE,
    )

    # Status, risk level, controls, limits.
    ok(api.patch(f"/cards/{card}", {"riskLevel": "medium"}))
    ok(api.patch(f"/cards/{card}", {"status": "suspended", "reason": "travel"}))
    ok(api.patch(f"/cards/{card}", {"status": "active"}))
    api.patch(f"/cards/{card}", {"status": "active", "pan": pan})  # an unknown field: 400
    ok(api.patch(f"/cards/{card}/security-settings", {"atm": False, "blockedMccs": ["7995"]}))
    api.get(f"/cards/{card}/security-settings")
    ok(api.patch(f"/cards/{card}/limits", {"perTransaction": 10_000}))
    api.get(f"/cards/{card}/limits")

    # PIN: set, verify, wrong tries, change, a wrong current PIN, weak PINs, unblock.
    ok(api.patch(f"/cards/{card}/pin", {"pin": PIN}))
    ok(api.post(f"/cards/{card}/pin-verifications", {"pin": PIN}), created_status)
    ok(api.post(f"/cards/{card}/pin-verifications", {"pin": WRONG_PIN}), created_status)
    ok(api.patch(f"/cards/{card}/pin", {"pin": NEW_PIN, "currentPin": PIN}))
    api.patch(f"/cards/{card}/pin", {"pin": PIN, "currentPin": WRONG_PIN})
    api.patch(f"/cards/{card}/pin", {"pin": PIN, "currentPin": WRONG_PIN})
    api.patch(f"/cards/{card}/pin", {"pin": "123456"})
    api.post(f"/cards/{card}/pin-verifications", {"pin": NEW_PIN})  # blocked
    ok(api.patch(f"/cards/{card}/pin", {"blocked": False}))
    ok(api.post(f"/cards/{card}/pin-verifications", {"pin": NEW_PIN}), created_status)
    if version == "v1":
        ok(api.post(f"/cards/{plastic}/pin", {"pin": PIN}))
    else:
        ok(api.patch(f"/cards/{plastic}/pin", {"pin": PIN}))

    # Card and PAN transfers, and what they leave on statements.
    transfer = ok(
        pan_api.post(
            "/transfers",
            {
                "source": {"pan": pan},
                "destination": {"accountId": bob_acc},
                "amount": 1_000,
                "currency": "EUR",
            },
        ),
        created_status,
    )
    ok(
        pan_api.post(
            "/transfers",
            {
                "source": {"cardId": card},
                "destination": {"pan": plastic_pan},
                "amount": 500,
                "currency": "EUR",
            },
        ),
        created_status,
    )
    pan_api.post(
        "/transfers",
        {
            "source": {"pan": pan},
            "destination": {"accountId": bob_acc},
            "amount": 10_001,
            "currency": "EUR",
        },
    )  # over the limit: 422
    api.get(f"/transfers/{transfer['transferId']}")
    api.get("/transfers")
    api.get(f"/accounts/{prepaid}/transactions")
    ok(api.post(f"/transfers/{transfer['transferId']}/reversals", {"amount": 100}), created_status)

    # Lifecycle.
    renewed = ok(api.post(f"/cards/{card}/renewals", {}), created_status)["cardId"]
    reissued = ok(
        api.post(f"/cards/{plastic}/reissues", {"embossedName": "Ada King", "reason": "name"}),
        created_status,
    )["cardId"]
    replaced = ok(api.post(f"/cards/{renewed}/replacements", {"reason": "stolen"}), created_status)[
        "cardId"
    ]
    read(reissued)
    read(replaced)
    # The old PAN names a stolen card now: refused, without repeating the PAN.
    pan_api.post(
        "/transfers",
        {
            "source": {"pan": pan},
            "destination": {"accountId": bob_acc},
            "amount": 100,
            "currency": "EUR",
        },
    )
    ok(pan_api.post("/card-lookups", {"pan": pan}))
    api.get(f"/cards/{card}")

    # A joint account.
    ok(
        api.post(
            joint_path(version),
            {
                "primaryCard": {"customerId": ada, "cardProductRid": product_rid(api, DEBIT)},
                "secondaryCard": {
                    "customerId": bob,
                    "cardProductRid": product_rid(api, DEBIT),
                    "form": "physical",
                    "deliveryAddress": address(version),
                },
            },
        ),
        created_status,
    )
    api.get("/events", {"limit": 100})
    api.get("/accounts")
    return reads


def test_no_pan_cvv_or_pin_outside_sensitive_details(api, institution, logs):
    api = Recording(api.version, api.key)
    sensitive_key, sensitive_secret = issue_key(institution, scopes=api_scopes.ALL)
    sensitive = Api(api.version, sensitive_secret)
    pan_api = Recording(api.version, sensitive_secret)
    reads = scenario(api, sensitive, pan_api)

    cards = list(Card.objects.all())
    assert len(cards) == 8
    pans = {card.pan() for card in cards}
    cvvs = {card.pk: card.cvv() for card in cards}
    assert len(pans) == 6  # a renewal and a reissue keep their PAN
    assert all(len(pan) == 16 for pan in pans)
    secrets = [*pans, *PINS]

    # 1. Every response without the scope: no PAN, no PIN, no CVV field.
    assert len(api.responses) + len(pan_api.responses) >= 50
    statuses = {response.status_code for response in api.responses}
    assert {200, 400, 403, 422} <= statuses
    assert {response.status_code for response in pan_api.responses} >= {200, 422}
    for response in api.responses + pan_api.responses:
        text = response.content.decode() + repr(sorted(response.items()))
        for secret in secrets:
            assert secret not in text, (response.request["PATH_INFO"], text)
        assert '"cvv"' not in text

    # 2. The reads with the scope: the secrets, never cached, each one recorded.
    for response in reads:
        assert response["Cache-Control"] == "no-store"
        body = response.json()["data"] if api.version == "v1" else response.json()
        assert body["pan"] in pans
        assert body["cvv"] == cvvs[body["cardId"]]
    accesses = list(SensitiveDetailsAccess.objects.order_by("accessed_at", "id"))
    assert len(accesses) == len(reads) == 5
    assert sorted(a.request_id for a in accesses) == sorted(r["X-Request-Id"] for r in reads)
    assert {a.api_key_id for a in accesses} == {sensitive_key.pk}
    assert {a.client_ip for a in accesses} == {"127.0.0.1"}
    assert sorted(a.card_id for a in accesses) == sorted(
        (r.json()["data"] if api.version == "v1" else r.json())["cardId"] for r in reads
    )

    # 3. Every log record at DEBUG, SQL included.
    formatter = JsonFormatter()
    names = {record.name for record in logs}
    assert {"tx.access", "django.db.backends"} <= names
    assert len([r for r in logs if r.name == "tx.access"]) == len(api.responses) + len(
        pan_api.responses
    ) + len(reads)
    for record in logs:
        text = formatter.format(record) + record.getMessage() + repr(vars(record))
        for secret in secrets:
            assert secret not in text, (record.name, text[:500])
        assert '"cvv"' not in text and "'cvv'" not in text, (record.name, text[:500])

    # 4. The idempotency records: their stored responses hold no secret either (stored
    # encrypted: what they answer on replay).
    records = list(IdempotencyRecord.objects.all())
    assert any(record.path.endswith("/card-lookups") for record in records)
    for record in records:
        stored = idempotency.opened(record.pk, bytes(record.response_body or b"")).decode()
        assert stored, record.path
        for secret in secrets:
            assert secret not in stored, record.path
        assert '"cvv"' not in stored

    # 5. A text dump of every table.
    dump = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT row_to_json(t)::text FROM "{table}" t')  # noqa: S608
            dump[table] = [row[0] for row in cursor.fetchall()]
    assert dump["cards_card"] and dump["api_idempotencyrecord"]
    everything = "\n".join(row for rows in dump.values() for row in rows)
    for secret in secrets:
        assert secret not in everything
        # bytea columns come out as hex.
        assert secret.encode().hex() not in everything

    # The CVV: only `cvv_encrypted` holds it, as ciphertext bound to its card.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND column_name ILIKE %s",
            ["%cvv%"],
        )
        assert cursor.fetchall() == [("cards_card", "cvv_encrypted")]
    rows = {row["id"]: row for row in map(json.loads, dump["cards_card"])}
    for card_id, cvv in cvvs.items():
        stored = rows[card_id]["cvv_encrypted"]
        assert CIPHERTEXT.match(stored) and stored != cvv and cvv not in stored.partition(":")[0]
        assert crypto.decrypt(stored, context=f"cards.Card.cvv:{card_id}") == cvv
    # No other value anywhere decrypts as a CVV (or as anything) of any card.
    candidates = [
        value
        for row in map(json.loads, (row for rows in dump.values() for row in rows))
        for value in _strings(row)
        if CIPHERTEXT.match(value)
    ]
    sealed = {row["cvv_encrypted"] for row in rows.values()} | {
        row["pan_encrypted"] for row in rows.values()
    }
    assert sealed <= set(candidates)
    for value in set(candidates) - sealed:
        for card_id in cvvs:
            for column in ("cvv", "pan"):
                with pytest.raises(Exception):  # noqa: B017, PT011 - any failure to decrypt
                    crypto.decrypt(value, context=f"cards.Card.{column}:{card_id}")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_sensitive_details_need_the_scope_and_a_live_card(api, institution):
    ada = customer(api)
    acc = account(api, ada)
    card = issue(api, acc, ada, status="active")["cardId"]
    before = SensitiveDetailsAccess.objects.count()
    assert_error(
        api.get(f"/cards/{card}/sensitive-details"),
        api.version,
        403,
        "permission_denied",
        SENSITIVE_SCOPE,
        message="This API key does not have the scope this operation needs.",
    )
    assert SensitiveDetailsAccess.objects.count() == before
    _, secret = issue_key(institution, scopes=api_scopes.ALL)
    sensitive = Api(api.version, secret)
    first = sensitive.get(f"/cards/{card}/sensitive-details")
    second = sensitive.get(f"/cards/{card}/sensitive-details")
    for response in (first, second):
        assert response.status_code == 200
        assert response["Cache-Control"] == "no-store"
        body = response.json()["data"] if api.version == "v1" else response.json()
        assert set(body) - {"meta"} == {"cardId", "pan", "cvv", "expiryMonth", "expiryYear"}
        assert re.fullmatch(r"\d{3}", body["cvv"]) and re.fullmatch(r"400002\d{10}", body["pan"])
    assert SensitiveDetailsAccess.objects.filter(card_id=card).count() == before + 2
    assert api.patch(f"/cards/{card}", {"status": "closed"}).status_code == 200
    response = sensitive.get(f"/cards/{card}/sensitive-details")
    assert_error(
        response, api.version, 422, "card_not_active", {"cardId": card, "status": "closed"}
    )
    assert SensitiveDetailsAccess.objects.filter(card_id=card).count() == before + 2
