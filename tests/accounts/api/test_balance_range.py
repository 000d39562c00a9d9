"""Balances at the edge of their bigint columns (security review L10): a posting that would take
an account's `posted`, `pending` or `available` (customer or internal: funding, settlement) past
the range is 422 `balance_out_of_range` and changes nothing; one that reaches the edge exactly
passes, and the account keeps working afterwards. Loads, transfers, batches (an independent
batch's item fails alone), hold captures, card returns and overdraft limits.

The balances are brought near the edge through the posting function itself (services and
`post()` take any amount; the API caps one at 10^15), so the ledger stays whole: every test ends
with `verify_ledger`'s checks clean."""

import uuid

import pytest
from django.db import transaction

from accounts.models import Account, AccountProduct, Adjustment, Entry, Journal
from accounts.models.accounts import BALANCE_MAX
from accounts.posting import credit, debit, journal_new, post
from accounts.services import adjustment_create, internal_account
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from events.models import Event
from tests.authorizations.helpers import card_return, funded
from transfers.models import Transfer

from .helpers import (
    CURRENT,
    adjust,
    assert_error,
    balances,
    created,
    load,
    open_account,
    resource,
    transfer,
)

BALANCE_MIN = -BALANCE_MAX - 1
MAX_AMOUNT = 10**15  # the most one request moves (core.money.MAX_AMOUNT)
MESSAGE = (
    "This would take a balance of the account past what it can hold "
    "(-9223372036854775808 to 9223372036854775807 minor units): nothing was posted."
)


def raise_to(account_id: str, posted: int) -> None:
    """Load the customer account `account_id` up to `posted` (one adjustment, any amount). The
    card clearing account gives the funding account that much first: the funding account
    stays where it was, and other loads have room."""
    account = Account.objects.get(pk=account_id)
    amount = posted - account.posted
    clearing = internal(account.institution, Account.InternalCode.CARD_CLEARING)
    funding = internal(account.institution, Account.InternalCode.FUNDING)
    move(account.institution, clearing, funding, amount)
    with transaction.atomic():
        adjustment_create(
            account=account,
            direction=Adjustment.Direction.CREDIT,
            amount=amount,
            currency=account.currency,
            actor=SYSTEM,
        )


def internal(institution, code: str) -> Account:
    return internal_account(institution=institution, code=code, currency="EUR")


def move(institution, source: Account, destination: Account, amount: int) -> None:
    """`amount` from one internal account to another, through the posting function."""
    with transaction.atomic():
        post(
            institution_id=institution.pk,
            currency="EUR",
            moves=[debit(source.pk, amount, check=""), credit(destination.pk, amount, check="")],
            journal=journal_new(institution_id=institution.pk, kind=Journal.Kind.ADJUSTMENT),
        )


def stored(*account_ids) -> list:
    return list(
        Account.objects.filter(pk__in=account_ids)
        .order_by("pk")
        .values_list("pk", "posted", "pending", "available")
    )


def written() -> tuple:
    """What a refused posting must not add to."""
    return (
        Entry.objects.count(),
        Journal.objects.count(),
        Adjustment.objects.count(),
        Transfer.objects.count(),
        Event.objects.count(),
    )


def assert_out_of_range(response, version: str, account_id: str) -> None:
    assert_error(response, version, 422, "balance_out_of_range", {"accountId": account_id}, MESSAGE)


def test_a_load_up_to_the_edge_passes_one_past_it_is_422_and_the_account_keeps_working(
    api, institution
):
    account_id = open_account(api)["accountId"]
    funding = internal(institution, Account.InternalCode.FUNDING)
    raise_to(account_id, BALANCE_MAX - MAX_AMOUNT)

    created(adjust(api, account_id, "credit", MAX_AMOUNT), api.version)
    assert balances(api, account_id) == {
        "posted": BALANCE_MAX,
        "pending": 0,
        "available": BALANCE_MAX,
    }

    before, rows = stored(account_id, funding.pk), written()
    refused = adjust(api, account_id, "credit", 1)
    assert_out_of_range(refused, api.version, account_id)
    assert (stored(account_id, funding.pk), written()) == (before, rows)
    # A replay of the refusal is the refusal, byte for byte (a stored 422).
    again = api.post(
        f"/accounts/{account_id}/adjustments",
        {"direction": "credit", "amount": 1, "currency": "EUR"},
        idempotency_key=(key := uuid.uuid4()),
    )
    assert_out_of_range(again, api.version, account_id)
    replayed = api.post(
        f"/accounts/{account_id}/adjustments",
        {"direction": "credit", "amount": 1, "currency": "EUR"},
        idempotency_key=key,
    )
    assert (replayed.status_code, replayed.content) == (422, again.content)

    # Later postings work: money out, then in again up to the edge.
    created(adjust(api, account_id, "debit", 5), api.version)
    created(adjust(api, account_id, "credit", 5), api.version)
    assert balances(api, account_id)["posted"] == BALANCE_MAX
    assert ledger_breaches() == []


def test_the_funding_account_reaches_its_lowest_balance_and_no_further(api, institution):
    other = open_account(api)["accountId"]
    funding = internal(institution, Account.InternalCode.FUNDING)
    clearing = internal(institution, Account.InternalCode.CARD_CLEARING)
    move(institution, funding, clearing, BALANCE_MAX)

    created(adjust(api, other, "credit", 1), api.version)
    assert Account.objects.get(pk=funding.pk).posted == BALANCE_MIN

    before, rows = stored(other, funding.pk), written()
    assert_out_of_range(adjust(api, other, "credit", 1), api.version, funding.pk)
    assert (stored(other, funding.pk), written()) == (before, rows)

    # An unload gives the funding account room again.
    created(adjust(api, other, "debit", 1), api.version)
    created(adjust(api, other, "credit", 1), api.version)
    assert Account.objects.get(pk=funding.pk).posted == BALANCE_MIN
    assert ledger_breaches() == []


@pytest.fixture
def overdraft_product(institution):
    AccountProduct.objects.filter(institution=institution, code=CURRENT).update(
        allows_overdraft=True, max_overdraft_limit=MAX_AMOUNT
    )


def test_available_with_an_overdraft_limit_stays_in_range(api_v2, overdraft_product):
    account_id = open_account(api_v2, code=CURRENT)["accountId"]
    raise_to(account_id, BALANCE_MAX - MAX_AMOUNT + 1)

    # The limit would take `available` one past the edge; one less reaches it.
    assert_out_of_range(
        api_v2.patch(f"/accounts/{account_id}", {"overdraftLimit": MAX_AMOUNT}),
        "v2",
        account_id,
    )
    assert Account.objects.get(pk=account_id).overdraft_limit == 0
    body = resource(
        api_v2.patch(f"/accounts/{account_id}", {"overdraftLimit": MAX_AMOUNT - 1}), "v2"
    )
    assert body["overdraftLimit"] == MAX_AMOUNT - 1
    assert balances(api_v2, account_id)["available"] == BALANCE_MAX

    # `posted` has room for 10^15 - 1 more, `available` for nothing.
    before, rows = stored(account_id), written()
    assert_out_of_range(adjust(api_v2, account_id, "credit", 1), "v2", account_id)
    assert (stored(account_id), written()) == (before, rows)
    assert balances(api_v2, account_id) == {
        "posted": BALANCE_MAX - MAX_AMOUNT + 1,
        "pending": 0,
        "available": BALANCE_MAX,
    }
    # Spending works, then loading again up to the edge, and lowering the limit.
    created(adjust(api_v2, account_id, "debit", 10), "v2")
    load(api_v2, account_id, 10)
    assert balances(api_v2, account_id)["available"] == BALANCE_MAX
    resource(api_v2.patch(f"/accounts/{account_id}", {"overdraftLimit": 0}), "v2")
    assert ledger_breaches() == []


def test_a_transfer_into_a_full_account_is_422_and_changes_nothing(api):
    source = open_account(api)["accountId"]
    full = open_account(api)["accountId"]
    load(api, source, 100)
    raise_to(full, BALANCE_MAX - 10)

    created(transfer(api, source, full, 10), api.version)
    before, rows = stored(source, full), written()
    assert_out_of_range(transfer(api, source, full, 1), api.version, full)
    assert (stored(source, full), written()) == (before, rows)
    created(transfer(api, full, source, 1), api.version)
    assert ledger_breaches() == []


def test_a_batch_item_past_the_edge_fails_alone_or_refuses_the_atomic_batch(api_v2):
    source = open_account(api_v2)["accountId"]
    full = open_account(api_v2)["accountId"]
    other = open_account(api_v2)["accountId"]
    load(api_v2, source, 1_000)
    raise_to(full, BALANCE_MAX - 10)

    def item(destination, amount):
        return {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": amount,
            "currency": "EUR",
        }

    # Item 1 fits only before item 0 (running balances): it is the one refused.
    items = [item(full, 6), item(full, 5), item(other, 7), item(full, 4)]
    before, rows = stored(source, full, other), written()
    refused = api_v2.post("/transfer-batches", {"mode": "atomic", "transfers": items})
    assert_error(
        refused,
        "v2",
        422,
        "batch_item_failed",
        {
            "index": 1,
            "code": "balance_out_of_range",
            "message": MESSAGE,
            "details": {"accountId": full},
        },
    )
    assert (stored(source, full, other), written()) == (before, rows)

    document = created(
        api_v2.post("/transfer-batches", {"mode": "independent", "transfers": items}), "v2"
    )
    assert [(r["status"], r.get("code")) for r in document["results"]] == [
        ("posted", None),
        ("failed", "balance_out_of_range"),
        ("posted", None),
        ("posted", None),
    ]
    assert balances(api_v2, full)["posted"] == BALANCE_MAX
    assert balances(api_v2, other)["posted"] == 7
    assert balances(api_v2, source)["posted"] == 1_000 - 17
    assert ledger_breaches() == []


def test_a_capture_into_a_full_settlement_account_is_422_and_the_hold_stays(api, institution):
    account_id = open_account(api)["accountId"]
    load(api, account_id, 1_000)
    settlement = internal(institution, Account.InternalCode.SETTLEMENT)
    clearing = internal(institution, Account.InternalCode.CARD_CLEARING)
    move(institution, clearing, settlement, BALANCE_MAX - 100)
    hold = created(
        api.post("/holds", {"accountId": account_id, "amount": 300, "currency": "EUR"}),
        api.version,
    )

    before, rows = stored(account_id, settlement.pk), written()
    refused = api.post(f"/holds/{hold['holdId']}/captures", {"amount": 101})
    assert_out_of_range(refused, api.version, settlement.pk)
    assert (stored(account_id, settlement.pk), written()) == (before, rows)
    assert resource(api.get(f"/holds/{hold['holdId']}"), api.version)["status"] == "active"

    # Up to the edge it is captured.
    created(api.post(f"/holds/{hold['holdId']}/captures", {"amount": 100}), api.version)
    assert Account.objects.get(pk=settlement.pk).posted == BALANCE_MAX
    assert balances(api, account_id) == {"posted": 900, "pending": 0, "available": 900}
    assert ledger_breaches() == []


def test_a_card_return_into_a_full_account_is_422_and_changes_nothing(api):
    card = funded(api)
    raise_to(card.account_id, BALANCE_MAX - 750)

    created(card_return(api, card.card_id, 750), api.version)
    before, rows = stored(card.account_id), written()
    assert_out_of_range(card_return(api, card.card_id, 1), api.version, card.account_id)
    assert (stored(card.account_id), written()) == (before, rows)
    assert balances(api, card.account_id)["posted"] == BALANCE_MAX
    assert ledger_breaches() == []
