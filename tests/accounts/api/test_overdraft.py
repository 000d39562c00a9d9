"""Overdraft (docs/overdraft.md): `PATCH /accounts/{id}` with `overdraftLimit` (v2) on a product
that allows it, up to the product's maximum; `available = posted - pending + overdraftLimit`;
transfers and debit cards spend into it to the last minor unit and not one past; lowering the
limit below what is used is 422 `overdraft_limit_in_use`; concurrent debits never take the
account past its limit; verify_ledger stays clean."""

import threading

import pytest
from django.db import connection

from accounts.models import Account, AccountProduct
from accounts.verification import ledger_breaches
from tests.authorizations.helpers import approved, declined
from tests.cards.api.helpers import DEBIT, issue

from .helpers import (
    ANY,
    CURRENT,
    PREPAID,
    assert_error,
    assert_validation_error,
    balances,
    events,
    funded_account,
    load,
    open_account,
    resource,
    transfer,
)

MAX = 50_000


@pytest.fixture
def overdraft_product(institution):
    """The institution's current-account product, allowing overdraft up to MAX."""
    AccountProduct.objects.filter(institution=institution, code=CURRENT).update(
        allows_overdraft=True, max_overdraft_limit=MAX
    )


def set_limit(api, account_id, limit, **fields):
    return api.patch(f"/accounts/{account_id}", {"overdraftLimit": limit, **fields})


def stored(account_id):
    return Account.objects.values("posted", "pending", "overdraft_limit", "status").get(
        pk=account_id
    )


def test_a_limit_is_set_shown_and_counted_in_available(api_v2, overdraft_product):
    account = funded_account(api_v2, 1_000, code=CURRENT)
    account_id = account["accountId"]
    assert account["overdraftLimit"] == 0

    body = resource(set_limit(api_v2, account_id, 20_000), "v2")

    assert body["overdraftLimit"] == 20_000
    assert body["balances"] == {
        "posted": 1_000,
        "pending": 0,
        "available": 21_000,
        "currency": "EUR",
    }
    assert balances(api_v2, account_id) == {"posted": 1_000, "pending": 0, "available": 21_000}
    assert [e["data"] for e in events(api_v2, "account.overdraft_limit_changed", account_id)] == [
        {"from": 0, "to": 20_000}
    ]
    # The same limit again changes nothing and says nothing.
    resource(set_limit(api_v2, account_id, 20_000), "v2")
    assert len(events(api_v2, "account.overdraft_limit_changed", account_id)) == 1


def test_the_product_must_allow_it_and_its_maximum_holds(api_v2, overdraft_product):
    prepaid = open_account(api_v2, code=PREPAID)["accountId"]
    response = set_limit(api_v2, prepaid, 1)
    error = assert_error(response, "v2", 400, "validation_error", details=ANY)
    assert "overdraftLimit" in error["details"]
    assert stored(prepaid)["overdraft_limit"] == 0

    current = open_account(api_v2, code=CURRENT)["accountId"]
    assert_validation_error(
        set_limit(api_v2, current, MAX + 1),
        "v2",
        {"overdraftLimit": f"At most {MAX} on product {_product(current)}."},
    )
    assert resource(set_limit(api_v2, current, MAX), "v2")["overdraftLimit"] == MAX


def test_a_lowered_product_cap_still_lets_a_limit_go_down_not_up(api_v2, overdraft_product):
    current = open_account(api_v2, code=CURRENT)["accountId"]
    resource(set_limit(api_v2, current, MAX), "v2")
    AccountProduct.objects.filter(pk=_product(current)).update(
        allows_overdraft=False, max_overdraft_limit=0
    )

    assert resource(set_limit(api_v2, current, MAX - 1), "v2")["overdraftLimit"] == MAX - 1
    error = assert_error(set_limit(api_v2, current, MAX), "v2", 400, "validation_error", ANY)
    assert set(error["details"]) == {"overdraftLimit"}
    assert stored(current)["overdraft_limit"] == MAX - 1


@pytest.mark.parametrize("value", [-1, 1.5, "100", True, None])
def test_a_limit_that_is_not_a_count_of_minor_units_is_refused(api_v2, overdraft_product, value):
    current = open_account(api_v2, code=CURRENT)["accountId"]
    response = set_limit(api_v2, current, value)
    error = assert_error(response, "v2", 400, "validation_error", details=ANY)
    assert set(error["details"]) == {"overdraftLimit"}
    assert stored(current)["overdraft_limit"] == 0


def test_an_empty_update_is_refused(api_v2):
    account_id = open_account(api_v2)["accountId"]
    assert_validation_error(
        api_v2.patch(f"/accounts/{account_id}", {}),
        "v2",
        {"status": "Give at least one of status, overdraftLimit, metadata."},
    )


def test_transfers_spend_into_the_overdraft_to_the_last_minor_unit(api_v2, overdraft_product):
    source = funded_account(api_v2, 1_000, code=CURRENT)["accountId"]
    destination = open_account(api_v2)["accountId"]
    resource(set_limit(api_v2, source, 5_000), "v2")

    past = transfer(api_v2, source, destination, 6_001)
    assert_error(past, "v2", 422, "insufficient_funds", details=ANY)
    assert stored(source)["posted"] == 1_000

    assert transfer(api_v2, source, destination, 6_000).status_code == 201
    assert balances(api_v2, source) == {"posted": -5_000, "pending": 0, "available": 0}
    assert_error(transfer(api_v2, source, destination, 1), "v2", 422, "insufficient_funds", ANY)
    assert ledger_breaches() == []


def test_a_debit_card_spends_into_the_overdraft(api_v2, overdraft_product):
    account = funded_account(api_v2, 500, code=CURRENT)
    account_id = account["accountId"]
    resource(set_limit(api_v2, account_id, 2_000), "v2")
    card = issue(api_v2, account_id, account["customerId"], DEBIT, status="active")

    declined(api_v2, card["cardId"], 2_501, "insufficient_funds")
    approved(api_v2, card["cardId"], 2_500)

    assert balances(api_v2, account_id) == {"posted": 500, "pending": 2_500, "available": 0}
    assert ledger_breaches() == []


def test_lowering_the_limit_below_what_is_used_is_refused(api_v2, overdraft_product):
    source = open_account(api_v2, code=CURRENT)["accountId"]
    destination = open_account(api_v2)["accountId"]
    resource(set_limit(api_v2, source, 10_000), "v2")
    assert transfer(api_v2, source, destination, 4_000).status_code == 201

    assert_error(
        set_limit(api_v2, source, 3_999),
        "v2",
        422,
        "overdraft_limit_in_use",
        {"posted": -4_000, "pending": 0, "overdraftLimit": 3_999},
    )
    assert stored(source)["overdraft_limit"] == 10_000

    # Down to exactly what is used is fine; the account then has nothing available.
    assert resource(set_limit(api_v2, source, 4_000), "v2")["overdraftLimit"] == 4_000
    assert balances(api_v2, source)["available"] == 0
    # Once repaid, the limit can go to zero.
    load(api_v2, source, 4_000)
    assert resource(set_limit(api_v2, source, 0), "v2")["overdraftLimit"] == 0
    assert ledger_breaches() == []


def test_status_and_limit_change_together_or_not_at_all(api_v2, overdraft_product):
    account_id = open_account(api_v2, code=CURRENT)["accountId"]
    response = set_limit(api_v2, account_id, MAX + 1, status="frozen")
    assert response.status_code == 400
    assert stored(account_id)["status"] == "active"

    body = resource(set_limit(api_v2, account_id, 100, status="frozen"), "v2")
    assert (body["status"], body["overdraftLimit"]) == ("frozen", 100)


def test_a_closed_account_gets_no_limit(api_v2, overdraft_product):
    account_id = open_account(api_v2, code=CURRENT)["accountId"]
    resource(api_v2.patch(f"/accounts/{account_id}", {"status": "closed"}), "v2")
    assert_error(set_limit(api_v2, account_id, 100), "v2", 422, "account_not_active", ANY)


def test_v1_neither_shows_nor_sets_it(api_v1, overdraft_product):
    account = open_account(api_v1, code=CURRENT)
    assert "overdraftLimit" not in account
    response = set_limit(api_v1, account["accountId"], 100)
    assert response.status_code == 400
    assert stored(account["accountId"])["overdraft_limit"] == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_debits_never_pass_the_limit(api_v2, overdraft_product):
    """Eight threads each move 3,000 out of an account with 1,000 and a limit of 10,000: exactly
    three fit (9,000 of 11,000), the others are refused, and the ledger holds."""
    source = funded_account(api_v2, 1_000, code=CURRENT)["accountId"]
    resource(set_limit(api_v2, source, 10_000), "v2")
    destination = open_account(api_v2)["accountId"]
    barrier = threading.Barrier(8)
    statuses = []

    def debit():
        try:
            barrier.wait()
            statuses.append(transfer(api_v2, source, destination, 3_000).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=debit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(statuses) == [201] * 3 + [422] * 5
    assert balances(api_v2, source) == {"posted": -8_000, "pending": 0, "available": 2_000}
    assert ledger_breaches() == []


def _product(account_id):
    return Account.objects.get(pk=account_id).product_id
