"""Two-phase transfers over HTTP, in both versions (docs/two-phase-transfers.md): created
`pending` with a hold on the source, then posted (whole or in part), voided, or expired by the
hold expiry job; resolved at most once. Account, card and PAN sources; balances, statement
lines, events and card limits at each step, and `verify_ledger` clean after each scenario."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Hold
from accounts.verification import ledger_breaches
from events.models import Event
from institutions import scopes as api_scopes
from jobs import tasks
from tests.accounts.api.helpers import (
    ANY,
    CREATED,
    TIMESTAMP,
    assert_error,
    assert_validation_error,
    balances,
    events,
    funded_account,
    money,
    open_account,
    resource,
    set_status,
    statement,
)
from tests.cards.api.helpers import account as card_account
from tests.cards.api.helpers import customer, issue, secrets_of, sensitive_api, usage_of
from tests.factories import issue_key
from transfers.models import Transfer

pytestmark = pytest.mark.django_db

START = 10_000


@pytest.fixture
def key(institution):
    """Every scope: PAN transfers need `cards:sensitive`."""
    return issue_key(institution, scopes=api_scopes.ALL)


@pytest.fixture
def pair(api):
    """(source, destination) account ids, holding 10 000 and 0."""
    return funded_account(api, START)["accountId"], funded_account(api, 0)["accountId"]


def refused(response, version: str, status: int, code: str, details=ANY):
    return assert_error(response, version, status, code, details)


def in_days(days: float) -> str:
    return (timezone.now() + timedelta(days=days)).isoformat().replace("+00:00", "Z")


def create_pending(api, source: dict, destination: dict, amount: int, **fields):
    body = {
        "source": source,
        "destination": destination,
        "amount": amount,
        "currency": "EUR",
        "hold": {"expiresAt": in_days(1)},
        **fields,
    }
    return api.post("/transfers", body)


def pending(api, source: str, destination: str, amount: int, **fields) -> dict:
    """A pending transfer between two accounts, as created."""
    response = create_pending(
        api, {"accountId": source}, {"accountId": destination}, amount, **fields
    )
    assert response.status_code == CREATED[api.version], response.content
    return resource(response, api.version, CREATED[api.version])


def resolve(api, transfer_id: str, **body):
    """v2: PATCH; v1: POST to the same path (its alias of PATCH, docs/design.md section 4)."""
    send = api.patch if api.version == "v2" else api.post
    return send(f"/transfers/{transfer_id}", body)


def resolved(api, transfer_id: str, **body) -> dict:
    response = resolve(api, transfer_id, **body)
    assert response.status_code == 200, response.content
    return resource(response, api.version)


def line_of(api, account_id: str, transfer_id: str) -> dict:
    [line] = [item for item in statement(api, account_id) if item["transferId"] == transfer_id]
    return line


def no_line(api, account_id: str, transfer_id: str) -> None:
    assert [item for item in statement(api, account_id) if item["transferId"] == transfer_id] == []


def event_data(api, type: str, transfer_id: str) -> dict:
    [event] = events(api, type, transfer_id)
    return event["data"]


def hold_of(transfer_id: str) -> Hold:
    return Transfer.objects.select_related("hold").get(pk=transfer_id).hold


def backdate(transfer_id: str) -> None:
    """Its time is up (the hold and the transfer say the same)."""
    past = timezone.now() - timedelta(seconds=1)
    transfer = Transfer.objects.get(pk=transfer_id)
    Hold.objects.filter(pk=transfer.hold_id).update(expires_at=past)
    Transfer.objects.filter(pk=transfer_id).update(expires_at=past)


def expire_job() -> dict:
    return tasks.expire_holds(timestamp=0)


# --- creating -------------------------------------------------------------------------------
def test_a_pending_transfer_holds_the_amount_on_the_source(api, pair):
    source, destination = pair

    body = pending(api, source, destination, 2_500, description="Deposit")

    assert body["status"] == "pending"
    assert (body["amount"], body["postedAmount"], body["reversedAmount"]) == (2_500, 0, 0)
    assert set(body["hold"]) == {"holdId", "expiresAt"}
    assert TIMESTAMP.match(body["hold"]["expiresAt"])
    assert resource(api.get(f"/transfers/{body['transferId']}"), api.version) == body
    # Held, not moved: available drops, posted does not; nothing reaches the destination.
    assert balances(api, source) == money(START, pending=2_500)
    assert balances(api, destination) == money(0)
    line = line_of(api, source, body["transferId"])
    assert (line["type"], line["settlementStatus"], line["status"], line["amount"]) == (
        "CashDec",
        "Unsettled",
        "pending",
        2_500,
    )
    assert (line["holdId"], line["description"]) == (body["hold"]["holdId"], "Deposit")
    no_line(api, destination, body["transferId"])
    assert event_data(api, "transfer.pending", body["transferId"]) == {
        "amount": 2_500,
        "currency": "EUR",
        "sourceAccountId": source,
        "destinationAccountId": destination,
        "holdId": body["hold"]["holdId"],
        "expiresAt": body["hold"]["expiresAt"],
    }
    assert events(api, "transfer.posted", body["transferId"]) == []
    hold = hold_of(body["transferId"])
    assert (hold.purpose, hold.status, hold.amount) == ("transfer", "active", 2_500)
    assert ledger_breaches() == []


def test_the_hold_defaults_to_seven_days(api, pair):
    source, destination = pair
    response = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 100,
            "currency": "EUR",
            "hold": {},
        },
    )
    body = resource(response, api.version, CREATED[api.version])
    expires_at = Transfer.objects.get(pk=body["transferId"]).expires_at
    assert timedelta(days=7) - timedelta(minutes=1) < expires_at - timezone.now() <= timedelta(7)


def test_funds_are_checked_when_the_transfer_is_created(api, pair):
    source, destination = pair
    response = create_pending(api, {"accountId": source}, {"accountId": destination}, START + 1)
    refused(response, api.version, 422, "insufficient_funds")
    assert Transfer.objects.count() == 0
    assert balances(api, source) == money(START)

    held = pending(api, source, destination, 8_000)
    # The held amount is not available to anyone else...
    other = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 2_001,
            "currency": "EUR",
        },
    )
    refused(other, api.version, 422, "insufficient_funds")
    # ...and the rest of the account may go: posting does not check the funds again.
    spent = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 2_000,
            "currency": "EUR",
        },
    )
    assert spent.status_code == CREATED[api.version], spent.content
    assert balances(api, source) == money(8_000, pending=8_000)
    assert resolved(api, held["transferId"], status="posted")["status"] == "posted"
    assert balances(api, source) == money(0)
    assert balances(api, destination) == money(START)
    assert ledger_breaches() == []


def test_a_closed_destination_is_refused_at_creation(api, pair):
    source, _ = pair
    closed = open_account(api)["accountId"]
    assert set_status(api, closed, "closed").status_code == 200
    response = create_pending(api, {"accountId": source}, {"accountId": closed}, 100)
    refused(response, api.version, 422, "account_not_active")
    assert Transfer.objects.count() == 0
    assert Hold.objects.count() == 0
    assert balances(api, source) == money(START)


@pytest.mark.parametrize(
    ("hold", "message"),
    [
        ({"expiresAt": "2020-01-01T00:00:00Z"}, "Must be in the future and within 30 days."),
        ({"expiresAt": "in-a-day"}, None),
        ({"expires": "2030-01-01T00:00:00Z"}, None),
        ("tomorrow", None),
    ],
)
def test_a_bad_hold_is_a_validation_error(api, pair, hold, message):
    source, destination = pair
    response = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 100,
            "currency": "EUR",
            "hold": hold,
        },
    )
    error = refused(response, api.version, 400, "validation_error")
    if message is not None:
        assert error["details"] == {"hold.expiresAt": message}
    assert Transfer.objects.count() == 0


def test_more_than_thirty_days_is_refused(api, pair):
    source, destination = pair
    response = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 100,
            "currency": "EUR",
            "hold": {"expiresAt": in_days(31)},
        },
    )
    assert_validation_error(
        response, api.version, {"hold.expiresAt": "Must be in the future and within 30 days."}
    )


def test_a_batch_item_takes_no_hold(api_v2):
    source = funded_account(api_v2, START)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    item = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 100,
        "currency": "EUR",
        "hold": {"expiresAt": in_days(1)},
    }
    response = api_v2.post("/transfer-batches", {"mode": "atomic", "transfers": [item]})
    assert_validation_error(
        response,
        "v2",
        {
            "transfers.0.hold": "A batch posts its transfers at once: send a two-phase "
            "transfer on its own (POST /transfers)."
        },
    )
    assert Transfer.objects.count() == 0


# --- posting ---------------------------------------------------------------------------------
def test_posting_moves_the_whole_amount(api, pair):
    source, destination = pair
    created = pending(api, source, destination, 2_500, description="Deposit")
    transfer_id = created["transferId"]

    body = resolved(api, transfer_id, status="posted")

    assert body == {
        **created,
        "status": "posted",
        "postedAmount": 2_500,
        "updatedAt": body["updatedAt"],
    }
    assert resource(api.get(f"/transfers/{transfer_id}"), api.version) == body
    assert balances(api, source) == money(START - 2_500)
    assert balances(api, destination) == money(2_500)
    out, into = line_of(api, source, transfer_id), line_of(api, destination, transfer_id)
    assert (out["type"], out["settlementStatus"], out["status"], out["amount"]) == (
        "CashDec",
        "Presentment",
        "posted",
        2_500,
    )
    assert (into["type"], into["settlementStatus"], into["status"], into["amount"]) == (
        "CashInc",
        "Presentment",
        "posted",
        2_500,
    )
    assert into["direction"] == "credit" and into["description"] == "Deposit"
    assert event_data(api, "transfer.posted", transfer_id) == {
        "amount": 2_500,
        "heldAmount": 2_500,
        "currency": "EUR",
        "sourceAccountId": source,
        "destinationAccountId": destination,
        "holdId": created["hold"]["holdId"],
    }
    hold = hold_of(transfer_id)
    assert (hold.status, hold.captured_amount) == ("captured", 2_500)
    assert ledger_breaches() == []


def test_posting_part_releases_the_rest(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]

    body = resolved(api, transfer_id, status="posted", amount=1_500)

    assert (body["status"], body["amount"], body["postedAmount"]) == ("posted", 2_500, 1_500)
    assert balances(api, source) == money(START - 1_500)
    assert balances(api, destination) == money(1_500)
    assert line_of(api, source, transfer_id)["amount"] == 1_500
    assert line_of(api, destination, transfer_id)["amount"] == 1_500
    assert event_data(api, "transfer.posted", transfer_id)["amount"] == 1_500
    assert ledger_breaches() == []

    # A reversal gives back at most what was posted.
    too_much = api.post(f"/transfers/{transfer_id}/reversals", {"amount": 1_501})
    refused(too_much, api.version, 422, "amount_exceeds_remaining")
    reversal = api.post(f"/transfers/{transfer_id}/reversals", {})
    reversed_body = resource(reversal, api.version, CREATED[api.version])
    assert reversed_body["amount"] == 1_500
    assert (reversed_body["transfer"]["status"], reversed_body["transfer"]["reversedAmount"]) == (
        "reversed",
        1_500,
    )
    assert balances(api, source) == money(START)
    assert balances(api, destination) == money(0)
    assert ledger_breaches() == []


def test_posting_more_than_held_is_refused_and_changes_nothing(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]

    response = resolve(api, transfer_id, status="posted", amount=2_501)

    refused(
        response, api.version, 422, "amount_exceeds_remaining", {"amount": 2_501, "held": 2_500}
    )
    assert Transfer.objects.get(pk=transfer_id).status == "pending"
    assert balances(api, source) == money(START, pending=2_500)
    assert events(api, "transfer.posted", transfer_id) == []
    assert resolved(api, transfer_id, status="posted", amount=2_500)["postedAmount"] == 2_500
    assert ledger_breaches() == []


def test_a_closed_destination_leaves_it_pending(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    assert set_status(api, destination, "closed").status_code == 200

    response = resolve(api, transfer_id, status="posted")

    refused(response, api.version, 422, "account_not_active")
    assert Transfer.objects.get(pk=transfer_id).status == "pending"
    assert balances(api, source) == money(START, pending=2_500)
    assert line_of(api, source, transfer_id)["settlementStatus"] == "Unsettled"
    # It can still be voided.
    assert resolved(api, transfer_id, status="voided")["status"] == "voided"
    assert balances(api, source) == money(START)
    assert ledger_breaches() == []


def test_a_frozen_destination_receives_as_in_any_transfer(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    assert set_status(api, destination, "frozen").status_code == 200
    assert resolved(api, transfer_id, status="posted")["status"] == "posted"
    assert balances(api, destination) == money(2_500)


def test_a_frozen_source_cannot_pay_until_active_again(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    assert set_status(api, source, "frozen").status_code == 200
    refused(resolve(api, transfer_id, status="posted"), api.version, 422, "account_not_active")
    assert Transfer.objects.get(pk=transfer_id).status == "pending"
    assert set_status(api, source, "active").status_code == 200
    assert resolved(api, transfer_id, status="posted")["status"] == "posted"
    assert ledger_breaches() == []


# --- voiding and expiring ---------------------------------------------------------------------
def test_voiding_gives_the_amount_back(api, pair):
    source, destination = pair
    created = pending(api, source, destination, 2_500)
    transfer_id = created["transferId"]

    body = resolved(api, transfer_id, status="voided")

    assert body == {**created, "status": "voided", "updatedAt": body["updatedAt"]}
    assert balances(api, source) == money(START)
    assert balances(api, destination) == money(0)
    line = line_of(api, source, transfer_id)
    # As a reversed card authorization's: Unsettled, its hold released.
    assert (line["settlementStatus"], line["status"]) == ("Unsettled", "reversed")
    no_line(api, destination, transfer_id)
    assert event_data(api, "transfer.voided", transfer_id)["amount"] == 2_500
    assert hold_of(transfer_id).status == "released"
    assert ledger_breaches() == []


def test_the_expiry_job_expires_it_once(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    other = pending(api, source, destination, 1_000)["transferId"]
    assert expire_job()["transfers"] == 0
    backdate(transfer_id)

    assert expire_job() == {"holds": 0, "authorizations": 0, "transfers": 1}
    assert expire_job()["transfers"] == 0

    shown = resource(api.get(f"/transfers/{transfer_id}"), api.version)
    assert (shown["status"], shown["postedAmount"]) == ("expired", 0)
    assert Transfer.objects.get(pk=other).status == "pending"
    assert balances(api, source) == money(START, pending=1_000)
    line = line_of(api, source, transfer_id)
    assert (line["settlementStatus"], line["status"]) == ("Unsettled", "expired")
    [event] = Event.objects.filter(type="transfer.expired", object_id=transfer_id)
    assert (event.actor_type, event.actor_id) == ("system", None)
    assert event.data["amount"] == 2_500
    assert hold_of(transfer_id).status == "expired"
    assert ledger_breaches() == []


def test_the_expire_holds_command_expires_them_too(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    backdate(transfer_id)
    out = StringIO()
    call_command("expire_holds", stdout=out)
    assert out.getvalue() == (
        "Expired 0 hold(s), 0 card authorization(s) and 1 pending transfer(s).\n"
    )
    assert Transfer.objects.get(pk=transfer_id).status == "expired"


def test_past_expires_at_it_cannot_be_posted_even_before_the_job(api, pair):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    backdate(transfer_id)

    response = resolve(api, transfer_id, status="posted")

    refused(
        response, api.version, 409, "invalid_state_transition", {"from": "expired", "to": "posted"}
    )
    # A void is still allowed, as a standalone hold's release: the job then skips it.
    assert resolved(api, transfer_id, status="voided")["status"] == "voided"
    assert expire_job()["transfers"] == 0
    assert balances(api, source) == money(START)
    assert ledger_breaches() == []


# --- at most once ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("posted", "posted"),
        ("posted", "voided"),
        ("voided", "posted"),
        ("voided", "voided"),
        ("expired", "posted"),
        ("expired", "voided"),
    ],
)
def test_a_transfer_resolves_at_most_once(api, pair, first, then):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    if first == "expired":
        backdate(transfer_id)
        expire_job()
    else:
        resolved(api, transfer_id, status=first)
    before = (balances(api, source), balances(api, destination), Event.objects.count())

    response = resolve(api, transfer_id, status=then)

    refused(response, api.version, 409, "invalid_state_transition", {"from": first, "to": then})
    assert (balances(api, source), balances(api, destination), Event.objects.count()) == before
    assert ledger_breaches() == []


def test_a_transfer_posted_at_once_cannot_be_resolved(api, pair):
    source, destination = pair
    response = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": 100,
            "currency": "EUR",
        },
    )
    body = resource(response, api.version, CREATED[api.version])
    assert (body["hold"], body["postedAmount"]) == (None, 100)
    refused(
        resolve(api, body["transferId"], status="voided"),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "posted", "to": "voided"},
    )


@pytest.mark.parametrize("state", ["pending", "voided", "expired"])
def test_a_transfer_that_moved_no_money_cannot_be_reversed(api, pair, state):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    if state == "voided":
        resolved(api, transfer_id, status="voided")
    elif state == "expired":
        backdate(transfer_id)
        expire_job()

    response = api.post(f"/transfers/{transfer_id}/reversals", {})

    refused(
        response, api.version, 409, "invalid_state_transition", {"from": state, "to": "reversed"}
    )


def test_the_transfers_hold_is_not_released_or_captured_through_holds(api, pair):
    source, destination = pair
    created = pending(api, source, destination, 2_500)
    hold_id = created["hold"]["holdId"]
    refused(
        api.patch(f"/holds/{hold_id}", {"status": "released"}),
        api.version,
        409,
        "invalid_state_transition",
    )
    refused(
        api.post(f"/holds/{hold_id}/captures", {}), api.version, 409, "invalid_state_transition"
    )
    assert Transfer.objects.get(pk=created["transferId"]).status == "pending"
    assert balances(api, source) == money(START, pending=2_500)


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {"status": "This field is required."}),
        ({"status": "pending"}, None),
        ({"status": "reversed"}, None),
        (
            {"status": "voided", "amount": 100},
            {"amount": "Only a transfer that is posted has one."},
        ),
        ({"status": "posted", "amount": 0}, None),
        ({"status": "posted", "description": "x"}, {"description": "Unknown field."}),
    ],
)
def test_a_bad_update_is_a_validation_error(api, pair, body, details):
    source, destination = pair
    transfer_id = pending(api, source, destination, 2_500)["transferId"]
    response = resolve(api, transfer_id, **body)
    if body == {} and api.version == "v2":  # v2 also takes metadata alone (docs/metadata.md)
        details = {"status": "Give status, metadata or both."}
    if details is None:
        refused(response, api.version, 400, "validation_error")
    else:
        assert_validation_error(response, api.version, details)
    assert Transfer.objects.get(pk=transfer_id).status == "pending"


def test_v1_takes_patch_too(api_v1):
    source = funded_account(api_v1, START)["accountId"]
    destination = funded_account(api_v1, 0)["accountId"]
    transfer_id = pending(api_v1, source, destination, 2_500)["transferId"]
    response = api_v1.patch(f"/transfers/{transfer_id}", {"status": "posted"})
    assert response.status_code == 200, response.content
    assert resource(response, "v1")["status"] == "posted"


def test_a_retried_resolution_replays_its_answer(api_v2):
    source = funded_account(api_v2, START)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    transfer_id = pending(api_v2, source, destination, 2_500)["transferId"]
    key = "6f1c1c4e-4a8e-4c55-9a3c-5d0a3e8f1b2a"
    first = api_v2.patch(f"/transfers/{transfer_id}", {"status": "posted"}, idempotency_key=key)
    again = api_v2.patch(f"/transfers/{transfer_id}", {"status": "posted"}, idempotency_key=key)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert balances(api_v2, destination) == money(2_500)
    assert len(events(api_v2, "transfer.posted", transfer_id)) == 1


def test_webhooks_take_the_new_event_types(api):
    response = api.post(
        "/webhook-endpoints",
        {
            "url": "http://127.0.0.1:9/hooks",
            "eventTypes": [
                "transfer.pending",
                "transfer.posted",
                "transfer.voided",
                "transfer.expired",
            ],
        },
    )
    assert response.status_code == CREATED[api.version], response.content


# --- cards and PANs --------------------------------------------------------------------------
class Cards:
    """Ada's funded account with an active card; Bob's empty account."""

    def __init__(self, api, institution):
        self.api = api
        self.sensitive = sensitive_api(api, institution)
        self.ada = customer(api)
        self.ada_acc = card_account(api, self.ada, load=START)
        self.bob_acc = card_account(api, customer(api, "Bob", "Builder"))
        self.card = issue(api, self.ada_acc, self.ada, status="active")["cardId"]

    def source(self, by: str) -> dict:
        if by == "pan":
            return {"pan": secrets_of(self.sensitive, self.card)["pan"]}
        return {"cardId": self.card}

    def pending(self, by: str, amount: int) -> dict:
        response = create_pending(self.api, self.source(by), {"accountId": self.bob_acc}, amount)
        assert response.status_code == CREATED[self.api.version], response.content
        return resource(response, self.api.version, CREATED[self.api.version])

    def used(self) -> int:
        return usage_of(self.api, self.card)["daily"]


@pytest.fixture
def cards(api, institution):
    return Cards(api, institution)


@pytest.mark.parametrize("by", ["cardId", "pan"])
def test_a_card_source_counts_its_limits_and_posting_part_gives_the_rest_back(api, cards, by):
    body = cards.pending(by, 3_000)
    assert body["source"] == {"accountId": cards.ada_acc, "cardId": cards.card}
    assert cards.used() == 3_000
    line = line_of(api, cards.ada_acc, body["transferId"])
    assert (line["cardId"], line["settlementStatus"]) == (cards.card, "Unsettled")
    assert event_data(api, "transfer.pending", body["transferId"])["sourceCardId"] == cards.card

    resolved(api, body["transferId"], status="posted", amount=2_000)

    assert cards.used() == 2_000
    assert balances(api, cards.ada_acc) == money(START - 2_000)
    assert balances(api, cards.bob_acc) == money(2_000)
    assert line_of(api, cards.ada_acc, body["transferId"])["settlementStatus"] == "Presentment"
    assert ledger_breaches() == []


@pytest.mark.parametrize("by", ["cardId", "pan"])
def test_a_voided_card_transfer_gives_the_limit_back(api, cards, by):
    body = cards.pending(by, 3_000)
    assert cards.used() == 3_000
    resolved(api, body["transferId"], status="voided")
    assert cards.used() == 0
    assert balances(api, cards.ada_acc) == money(START)
    assert ledger_breaches() == []


def test_an_expired_card_transfer_gives_the_limit_back(api, cards):
    body = cards.pending("cardId", 3_000)
    backdate(body["transferId"])
    assert expire_job()["transfers"] == 1
    assert cards.used() == 0
    assert balances(api, cards.ada_acc) == money(START)
    assert Transfer.objects.get(pk=body["transferId"]).status == "expired"
    assert ledger_breaches() == []


def test_a_pending_card_transfer_counts_against_the_limit(api, cards):
    limit = api.patch(
        f"/cards/{cards.card}/limits", {"perTransaction": 3_000, "daily": 4_000, "dailyCash": 1_000}
    )
    assert limit.status_code == 200, limit.content
    cards.pending("cardId", 3_000)
    response = create_pending(api, cards.source("cardId"), {"accountId": cards.bob_acc}, 1_001)
    refused(response, api.version, 422, "limit_exceeded")
    assert cards.used() == 3_000


def test_the_back_office_shows_a_pending_transfer(api_v2, admin_client):
    source = funded_account(api_v2, START)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    created = pending(api_v2, source, destination, 2_500)
    page = admin_client.get(f"/admin/transfers/transfer/{created['transferId']}/change/")
    assert page.status_code == 200
    assert created["hold"]["holdId"] in page.content.decode()
    assert admin_client.get("/admin/transfers/transfer/").status_code == 200
