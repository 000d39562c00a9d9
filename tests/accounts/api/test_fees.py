"""Fees over HTTP, in both versions (docs/fees.md): each kind charged with its amount, its own
journal to the institution's fees account, its statement line (`CashDec`, `category: "fee"` in
v2) and `fee.charged`; the foreign fee's rounding; a fee the account cannot pay is declined and
moves nothing; `GET /fees?accountId=` and `GET /fees/{id}`. The ledger is checked after each."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Account, Fee, StatementLine
from accounts.services.fees import basis_points_of
from accounts.verification import ledger_breaches
from jobs import tasks
from tests.authorizations.helpers import (
    ATM,
    MERCHANT,
    approved,
    balances,
    event_data,
    funded,
    items_of,
    money,
    presented,
    resource,
)
from tests.cards.api.helpers import PREPAID, PREPAID_ACCOUNT, institution_of, product_rid
from tests.conftest import Api

pytestmark = pytest.mark.django_db

ABROAD = {**MERCHANT, "name": "Boutique", "countryCode": "250"}  # the cardholder's is 276


def v2(api) -> Api:
    return Api("v2", api.key)


def set_account_fee(api, monthly: int) -> None:
    rid = product_rid(api, PREPAID_ACCOUNT, cards=False)
    response = v2(api).patch(f"/products/accounts/{rid}", {"monthlyFee": monthly})
    assert response.status_code == 200, response.content
    assert response.json()["monthlyFee"] == monthly


def set_card_fees(api, **fees) -> None:
    rid = product_rid(api, PREPAID)
    response = v2(api).patch(f"/products/cards/{rid}", fees)
    assert response.status_code == 200, response.content
    assert {name: response.json()[name] for name in fees} == fees


def fees_of(api, account_id: str, **params) -> list:
    return items_of(api, "/fees", accountId=account_id, **params)


def fees_account_posted(api) -> int:
    account = Account.objects.filter(
        institution=institution_of(api), internal_code="fees", currency="EUR"
    ).first()
    return 0 if account is None else account.posted


def fee_line(api, fee: dict) -> dict:
    """The fee's one statement line, as the account's listing shows it."""
    ids = _line_ids(fee["feeId"])
    (line,) = [
        line
        for line in items_of(api, f"/accounts/{fee['accountId']}/transactions")
        if line["transactionId"] in ids
    ]
    return line


def _line_ids(fee_id: str) -> set:
    return set(StatementLine.objects.filter(fee_id=fee_id).values_list("pk", flat=True))


def assert_charged_line(api, fee: dict, *, type="CashDec") -> dict:
    line = fee_line(api, fee)
    assert (line["type"], line["amount"], line["currency"], line["status"]) == (
        type,
        fee["amount"],
        "EUR",
        "posted",
    )
    if api.version == "v2":
        assert (line["category"], line["feeId"]) == ("fee", fee["feeId"])
    else:  # v1 keeps its contract (docs/metadata.md, "Versions")
        assert "category" not in line and "feeId" not in line
    return line


def backdate_accounts(*account_ids: str, days: int = 40) -> None:
    Account.objects.filter(pk__in=account_ids).update(
        created_at=timezone.now() - timedelta(days=days)
    )


def previous_month() -> str:
    first = timezone.now().astimezone(timezone.get_default_timezone()).replace(day=1)
    return (first - timedelta(days=1)).strftime("%Y-%m")


# --- monthly ---------------------------------------------------------------------------------
def test_the_monthly_job_charges_each_account_its_products_fee_once(api):
    set_account_fee(api, 300)
    paying, new = funded(api, load=1_000), funded(api, load=1_000, first="Bo")
    backdate_accounts(paying.account_id)  # `new` opened this month: owes nothing for the last

    assert tasks.charge_monthly_fees(timestamp=0) == {"charged": 1, "declined": 0}
    assert tasks.charge_monthly_fees(timestamp=0) == {"charged": 0, "declined": 0}

    (fee,) = fees_of(api, paying.account_id)
    assert fee == {
        "feeId": fee["feeId"],
        "accountId": paying.account_id,
        "cardId": None,
        "authorizationId": None,
        "kind": "monthly",
        "period": previous_month(),
        "amount": 300,
        "currency": "EUR",
        "status": "charged",
        "declineReason": None,
        "waiverReason": None,
        "waivedAt": None,
        "createdAt": fee["createdAt"],
        "updatedAt": fee["createdAt"],
    }
    assert fee["feeId"].startswith("fee_")
    assert resource(api.get(f"/fees/{fee['feeId']}"), api.version) == fee
    assert balances(api, paying.account_id) == money(700)
    assert balances(api, new.account_id) == money(1_000)
    assert fees_of(api, new.account_id) == []
    assert fees_account_posted(api) == 300
    assert_charged_line(api, fee)
    (data,) = event_data(api, "fee.charged", fee["feeId"])
    assert (data["kind"], data["amount"], data["period"], data["accountId"]) == (
        "monthly",
        300,
        previous_month(),
        paying.account_id,
    )
    assert ledger_breaches() == []


def test_a_monthly_fee_the_account_cannot_pay_is_declined_and_moves_nothing(api):
    set_account_fee(api, 300)
    short = funded(api, load=200)
    backdate_accounts(short.account_id)

    assert tasks.charge_monthly_fees(timestamp=0) == {"charged": 0, "declined": 1}
    assert tasks.charge_monthly_fees(timestamp=0) == {"charged": 0, "declined": 0}

    (fee,) = fees_of(api, short.account_id)
    assert (fee["status"], fee["declineReason"], fee["amount"]) == (
        "declined",
        "insufficient_funds",
        300,
    )
    assert balances(api, short.account_id) == money(200)
    assert fees_account_posted(api) == 0
    assert _line_ids(fee["feeId"]) == set()
    assert len(event_data(api, "fee.declined", fee["feeId"])) == 1
    assert event_data(api, "fee.charged", fee["feeId"]) == []
    assert ledger_breaches() == []


# --- card fees -------------------------------------------------------------------------------
def test_an_atm_withdrawal_is_charged_the_atm_fee_with_its_presentment(api):
    set_card_fees(api, atmFee=250)
    f = funded(api, load=10_000)
    authorization = approved(api, f.card_id, 2_000, type="Cash", merchant=ATM)
    assert fees_of(api, f.account_id) == []  # charged with the presentment, not before

    presented(api, authorization["authorizationId"])

    (fee,) = fees_of(api, f.account_id)
    assert (fee["kind"], fee["amount"], fee["status"], fee["cardId"], fee["authorizationId"]) == (
        "atm",
        250,
        "charged",
        f.card_id,
        authorization["authorizationId"],
    )
    assert balances(api, f.account_id) == money(10_000 - 2_000 - 250)
    assert fees_account_posted(api) == 250
    line = assert_charged_line(api, fee)
    assert (line["cardId"], line["authorizationId"]) == (
        f.card_id,
        authorization["authorizationId"],
    )
    assert len(event_data(api, "fee.charged", fee["feeId"])) == 1
    assert ledger_breaches() == []


def test_a_payment_at_home_pays_no_foreign_fee_and_a_goods_payment_no_atm_fee(api):
    set_card_fees(api, atmFee=250, foreignTransactionFeeBps=150)
    f = funded(api, load=10_000)
    presented(api, approved(api, f.card_id, 1_000)["authorizationId"])

    assert fees_of(api, f.account_id) == []
    assert balances(api, f.account_id) == money(9_000)
    assert ledger_breaches() == []


@pytest.mark.parametrize(
    ("amount", "fee"),
    [(1_000, 15), (34, 1), (33, 0)],  # 150 bps: 15.0, 0.51 up to 1, 0.495 down to 0 (no fee)
)
def test_a_payment_abroad_is_charged_the_foreign_fee_in_basis_points_half_up(api, amount, fee):
    set_card_fees(api, foreignTransactionFeeBps=150)
    f = funded(api, load=10_000)
    authorization = approved(api, f.card_id, amount, merchant=ABROAD)

    presented(api, authorization["authorizationId"])

    fees = fees_of(api, f.account_id)
    if fee == 0:
        assert fees == []
    else:
        (charged,) = fees
        assert (charged["kind"], charged["amount"], charged["authorizationId"]) == (
            "foreign_transaction",
            fee,
            authorization["authorizationId"],
        )
        assert_charged_line(api, charged)
    assert balances(api, f.account_id) == money(10_000 - amount - fee)
    assert ledger_breaches() == []


def test_basis_points_round_half_up_to_the_minor_unit():
    assert [basis_points_of(amount, 50) for amount in (99, 100, 101, 0)] == [0, 1, 1, 0]
    assert basis_points_of(12_345, 10_000) == 12_345
    assert basis_points_of(1_000, 0) == 0


def test_an_atm_fee_the_withdrawal_leaves_no_room_for_is_declined_the_withdrawal_stands(api):
    set_card_fees(api, atmFee=250)
    f = funded(api, load=2_100)
    authorization = approved(api, f.card_id, 2_000, type="Cash", merchant=ATM)

    presented(api, authorization["authorizationId"])

    (fee,) = fees_of(api, f.account_id)
    assert (fee["status"], fee["declineReason"]) == ("declined", "insufficient_funds")
    assert balances(api, f.account_id) == money(100)  # never below what the product allows
    assert fees_account_posted(api) == 0
    assert len(event_data(api, "fee.declined", fee["feeId"])) == 1
    assert ledger_breaches() == []


def test_a_card_replacement_is_charged_the_replacement_fee(api):
    set_card_fees(api, replacementFee=500)
    f = funded(api, load=1_000)

    response = api.post(f"/cards/{f.card_id}/replacements", {"reason": "damaged"})
    assert response.status_code in (200, 201), response.content

    (fee,) = fees_of(api, f.account_id)
    assert (fee["kind"], fee["amount"], fee["cardId"], fee["status"]) == (
        "replacement",
        500,
        f.card_id,
        "charged",
    )
    assert balances(api, f.account_id) == money(500)
    line = assert_charged_line(api, fee)
    assert line["cardId"] == f.card_id
    assert ledger_breaches() == []


# --- the listing -----------------------------------------------------------------------------
def test_fees_are_listed_per_account_newest_first_with_filters(api, other_api):
    set_card_fees(api, atmFee=100, foreignTransactionFeeBps=100)
    f = funded(api, load=10_000)
    abroad_atm = {**ATM, "countryCode": "250"}
    authorization = approved(api, f.card_id, 1_000, type="Cash", merchant=abroad_atm)
    presented(api, authorization["authorizationId"])

    listed = fees_of(api, f.account_id)
    assert [fee["kind"] for fee in listed] == ["foreign_transaction", "atm"]
    assert [fee["amount"] for fee in listed] == [10, 100]
    assert [fee["kind"] for fee in fees_of(api, f.account_id, kind="atm")] == ["atm"]
    assert fees_of(api, f.account_id, status="waived") == []
    # Another institution's account and fees are not found.
    assert other_api.get("/fees", {"accountId": f.account_id}).status_code == 404
    assert other_api.get(f"/fees/{listed[0]['feeId']}").status_code == 404
    assert api.get("/fees").status_code == 400  # accountId is required
    assert api.get("/fees", {"accountId": f.account_id, "kind": "nope"}).status_code == 400
    assert ledger_breaches() == []


def test_the_fee_row_records_what_the_api_shows(api):
    set_card_fees(api, atmFee=100)
    f = funded(api, load=10_000)
    authorization = approved(api, f.card_id, 1_000, type="Cash", merchant=ATM)
    presented(api, authorization["authorizationId"])

    fee = Fee.objects.get(account_id=f.account_id)
    assert fee.journal.kind == "fee"
    assert sorted(fee.journal.entries.values_list("direction", "amount", "account__kind")) == [
        ("credit", 100, "internal"),
        ("debit", 100, "customer"),
    ]
