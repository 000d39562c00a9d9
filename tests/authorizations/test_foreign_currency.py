"""Foreign currency on card authorizations (issue 31 item 4, docs/card-transactions.md, "Foreign
currency"): v2 takes the merchant's amount and currency next to the billing amount, stores and
shows them with the rate derived from the two, carries them on the events and the statement line,
and charges the foreign-transaction fee for them once; v1 keeps its contract. The rate's
arithmetic is checked exactly, and as a property over every pair of exponents."""

from decimal import Decimal
from fractions import Fraction

import pytest
from django.db import IntegrityError, transaction
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import StatementLine
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from authorizations.services.currency import (
    RATE_PLACES,
    amount_at_rate,
    conversion_rate,
)
from core.money import MAX_AMOUNT, currency_exponent
from tests.accounts.api.helpers import assert_validation_error, created
from tests.authorizations.helpers import (
    MERCHANT,
    START,
    authorization_of,
    balances,
    card_lines,
    event_data,
    funded,
    hold_of,
    items_of,
    line_of,
    money,
    present,
    presented,
)
from tests.cards.api.helpers import PREPAID, product_rid
from tests.conftest import Api, error_of

ABROAD = {**MERCHANT, "name": "Boutique", "countryCode": "250"}  # the cardholder's is 276
JPY = {"merchantAmount": 1_600, "merchantCurrency": "JPY"}  # 1,600 JPY billed 10.00 EUR
FOREIGN_FIELDS = ("merchantAmount", "merchantCurrency", "conversionRate")


def authorize(api, card_id: str, amount: int, *, currency="EUR", merchant=MERCHANT, **fields):
    """The helpers' request with body fields of this item's (`merchantAmount`, ...)."""
    body = {"cardId": card_id, "amount": amount, "currency": currency, "type": "Goods"}
    return api.post("/card-authorizations", {**body, "merchant": merchant, **fields})


def approved(api, card_id: str, amount: int, **fields) -> dict:
    body = created(authorize(api, card_id, amount, **fields), api.version)
    assert (body["approved"], body["status"]) == (True, "pending"), body
    return body


def declined(api, card_id: str, amount: int, code: str, **fields) -> dict:
    body = created(authorize(api, card_id, amount, **fields), api.version)
    assert (body["approved"], body["status"], body["declineCode"]) == (False, "declined", code)
    return body


def foreign_of(body: dict) -> tuple:
    return tuple(body[name] for name in FOREIGN_FIELDS)


def line_foreign(line: dict) -> tuple:
    return line["merchantAmount"], line["merchantCurrency"]


# --- approved, declined, mismatch --------------------------------------------------------------
def test_an_approved_foreign_payment_carries_the_merchant_amount_everywhere(api_v2):
    f = funded(api_v2)

    body = approved(api_v2, f.card_id, 1_000, merchant=ABROAD, **JPY)

    authorization_id = body["authorizationId"]
    # `amount` is the billing amount: held, limited and posted in the account's currency.
    assert (body["amount"], body["currency"]) == (1_000, "EUR")
    assert foreign_of(body) == (1_600, "JPY", "0.00625")
    assert foreign_of(authorization_of(api_v2, authorization_id)) == (1_600, "JPY", "0.00625")
    [listed] = items_of(api_v2, "/card-authorizations", cardId=f.card_id)
    assert foreign_of(listed) == (1_600, "JPY", "0.00625")
    assert hold_of(api_v2, body["holdId"])["amount"] == 1_000
    assert balances(api_v2, f.account_id) == money(START, 1_000)
    stored = Authorization.objects.get(pk=authorization_id)
    assert (stored.merchant_amount, stored.merchant_currency) == (1_600, "JPY")
    assert stored.conversion_rate == Decimal("0.00625")
    [data] = event_data(api_v2, "authorization.approved", authorization_id)
    assert {name: data[name] for name in FOREIGN_FIELDS} == {
        "merchantAmount": 1_600,
        "merchantCurrency": "JPY",
        "conversionRate": "0.00625",
    }
    assert (data["amount"], data["currency"]) == (1_000, "EUR")
    # The statement line shows what the merchant charged (v2).
    line = line_of(api_v2, body["transactionId"])
    assert (line["amount"], line["currency"], line_foreign(line)) == (1_000, "EUR", (1_600, "JPY"))
    [card_line] = card_lines(api_v2, f.card_id)
    assert line_foreign(card_line) == (1_600, "JPY")


def test_a_declined_foreign_payment_still_carries_the_merchant_amount(api_v2):
    f = funded(api_v2)

    body = declined(
        api_v2,
        f.card_id,
        START + 1,
        "insufficient_funds",
        merchantAmount=1_234_567,
        merchantCurrency="JPY",
    )

    rate = "0.00008100815913595617"  # 100.01 EUR / 1,234,567 JPY, 20 places
    assert foreign_of(body) == (1_234_567, "JPY", rate)
    [data] = event_data(api_v2, "authorization.declined", body["authorizationId"])
    assert foreign_of(data) == (1_234_567, "JPY", rate)
    assert data["declineCode"] == "insufficient_funds"


def test_a_billing_amount_not_in_the_accounts_currency_is_still_a_currency_mismatch(api_v2):
    f = funded(api_v2)

    # No merchant amount: the existing decline, and its event as it always was.
    plain = declined(api_v2, f.card_id, 1_000, "currency_mismatch", currency="USD")
    assert foreign_of(plain) == (None, None, None)
    [data] = event_data(api_v2, "authorization.declined", plain["authorizationId"])
    assert set(data) == {
        "cardId",
        "accountId",
        "type",
        "amount",
        "currency",
        "merchant",
        "declineCode",
    }
    # A merchant amount does not make a USD billing amount the account's: declined the same.
    body = declined(api_v2, f.card_id, 1_000, "currency_mismatch", currency="USD", **JPY)
    assert foreign_of(body) == (1_600, "JPY", "0.00625")
    assert balances(api_v2, f.account_id) == money(START)


def test_a_payment_without_a_merchant_amount_renders_as_before(api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1_000)

    assert foreign_of(body) == (None, None, None)
    [data] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert set(data) == {"cardId", "accountId", "type", "amount", "currency", "merchant"}
    assert line_foreign(line_of(api_v2, body["transactionId"])) == (None, None)


def test_the_merchant_amount_in_the_billing_currency_is_the_amount_itself(api_v2):
    f = funded(api_v2)

    body = approved(api_v2, f.card_id, 1_000, merchantAmount=1_000, merchantCurrency="EUR")

    assert foreign_of(body) == (1_000, "EUR", None)  # nothing converted: no rate
    [data] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert (data["merchantAmount"], data["merchantCurrency"]) == (1_000, "EUR")
    assert "conversionRate" not in data
    # Not foreign: the line needs no second amount.
    assert line_foreign(line_of(api_v2, body["transactionId"])) == (None, None)


# --- 400s --------------------------------------------------------------------------------------
PAIR = "Give merchantAmount and merchantCurrency together, or neither."
NOT_A_CODE = 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".'


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"merchantAmount": 1_600}, {"merchantCurrency": PAIR}),
        ({"merchantCurrency": "JPY"}, {"merchantAmount": PAIR}),
        (
            {"merchantAmount": 1_600, "merchantCurrency": "ABC"},
            {"merchantCurrency": "ABC is not an ISO 4217 currency code."},
        ),
        (
            {"merchantAmount": 1_600, "merchantCurrency": "jpy"},
            {"merchantCurrency": NOT_A_CODE},
        ),
        (
            {"merchantAmount": 1_600, "merchantCurrency": "XAU"},
            {"merchantCurrency": "XAU has no minor unit."},
        ),
        (
            {"merchantAmount": 999, "merchantCurrency": "EUR"},
            {"merchantAmount": "In the billing currency it must be the amount itself."},
        ),
    ],
)
def test_an_invalid_merchant_amount_decides_nothing(api_v2, fields, details):
    f = funded(api_v2)

    assert_validation_error(authorize(api_v2, f.card_id, 1_000, **fields), "v2", details)

    assert not Authorization.objects.exists()
    assert balances(api_v2, f.account_id) == money(START)


@pytest.mark.parametrize("value", [0, -5, 1.5, "1600", True, MAX_AMOUNT + 1])
def test_the_merchant_amount_is_a_positive_whole_number_of_minor_units(api_v2, value):
    f = funded(api_v2)
    response = authorize(api_v2, f.card_id, 1_000, merchantAmount=value, merchantCurrency="JPY")
    assert response.status_code == 400, response.content
    assert set(error_of(response, "v2")["details"]) == {"merchantAmount"}
    assert not Authorization.objects.exists()


# --- v1 ----------------------------------------------------------------------------------------
def test_v1_neither_takes_nor_shows_the_merchant_amount(api_v1, api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1_000, **JPY)

    shown = authorization_of(api_v1, body["authorizationId"])
    assert not set(FOREIGN_FIELDS) & set(shown)
    line = line_of(api_v1, body["transactionId"])
    assert "merchantAmount" not in line and "merchantCurrency" not in line
    assert_validation_error(
        authorize(api_v1, f.card_id, 1_000, **JPY),
        "v1",
        {"merchantAmount": "Unknown field.", "merchantCurrency": "Unknown field."},
    )
    # v2 takes no rate from the network: it derives it (an unknown field there too).
    assert_validation_error(
        authorize(api_v2, f.card_id, 1_000, **JPY, conversionRate="0.00625"),
        "v2",
        {"conversionRate": "Unknown field."},
    )
    assert Authorization.objects.count() == 1


# --- the presentment and its fee ---------------------------------------------------------------
def set_foreign_fee(api, bps: int) -> None:
    v2 = Api("v2", api.key)
    response = v2.patch(
        f"/products/cards/{product_rid(api, PREPAID)}", {"foreignTransactionFeeBps": bps}
    )
    assert response.status_code == 200, response.content


def foreign_fees(api, account_id: str) -> list:
    return [
        (fee["kind"], fee["amount"], fee["authorizationId"])
        for fee in items_of(api, "/fees", accountId=account_id)
    ]


@pytest.mark.parametrize(
    ("merchant", "fields", "charged"),
    [
        (MERCHANT, JPY, True),  # at home, in yen (dynamic currency conversion): foreign
        (ABROAD, JPY, True),  # abroad and in yen: one fee, not two
        (ABROAD, {}, True),  # abroad in euros: foreign by country, as before
        (MERCHANT, {"merchantAmount": 1_000, "merchantCurrency": "EUR"}, False),
        (MERCHANT, {}, False),
    ],
)
def test_the_foreign_fee_is_charged_once_for_a_foreign_country_or_currency(
    api_v2, merchant, fields, charged
):
    set_foreign_fee(api_v2, 150)
    f = funded(api_v2)
    authorization_id = approved(api_v2, f.card_id, 1_000, merchant=merchant, **fields)[
        "authorizationId"
    ]

    presented(api_v2, authorization_id)

    fee = 15  # 150 bps of the presented billing amount, 1,000
    expected = [("foreign_transaction", fee, authorization_id)] if charged else []
    assert foreign_fees(api_v2, f.account_id) == expected
    assert balances(api_v2, f.account_id) == money(START - 1_000 - (fee if charged else 0))
    assert ledger_breaches() == []


def test_a_presentment_of_the_authorized_amount_keeps_the_merchant_amount_on_the_line(api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1_000, **JPY)

    shown = presented(api_v2, body["authorizationId"])

    assert foreign_of(shown) == (1_600, "JPY", "0.00625")
    line = line_of(api_v2, body["transactionId"])
    assert (line["settlementStatus"], line["amount"], line_foreign(line)) == (
        "Presentment",
        1_000,
        (1_600, "JPY"),
    )


def test_a_presentment_of_another_amount_drops_the_merchant_amount_from_the_line(api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1_000, **JPY)

    assert present(api_v2, body["authorizationId"], 1_100).status_code == 201

    # What the merchant charged for 11.00 EUR is not known: the line claims nothing; the
    # authorization keeps what was authorized.
    line = line_of(api_v2, body["transactionId"])
    assert (line["amount"], line_foreign(line)) == (1_100, (None, None))
    assert foreign_of(authorization_of(api_v2, body["authorizationId"])) == (
        1_600,
        "JPY",
        "0.00625",
    )
    assert ledger_breaches() == []


# --- the database's rules ----------------------------------------------------------------------
def test_the_database_keeps_the_merchant_amount_and_its_currency_together(api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1_000, **JPY)
    rows = Authorization.objects.filter(pk=body["authorizationId"])
    lines = StatementLine.objects.filter(pk=body["transactionId"])

    for queryset, change in [
        (rows, {"merchant_currency": None}),
        (rows, {"merchant_amount": None}),
        (rows, {"merchant_amount": 0}),
        (rows, {"merchant_currency": "EUR"}),  # a rate where nothing was converted
        (rows, {"conversion_rate": Decimal(0)}),
        (lines, {"merchant_currency": None}),
        (lines, {"merchant_amount": -1}),
    ]:
        with pytest.raises(IntegrityError), transaction.atomic():
            queryset.update(**change)
    assert rows.filter(merchant_amount=1_600, merchant_currency="JPY").exists()


# --- the rate ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("amount", "currency", "merchant_amount", "merchant_currency", "rate"),
    [
        (1_000, "EUR", 1_600, "JPY", "0.00625"),  # 10.00 EUR for 1,600 JPY (exponent 0)
        (1_600, "JPY", 1_000, "EUR", "160"),  # the other way round
        (1_085, "EUR", 1_000, "USD", "1.085"),
        (1, "EUR", 3, "USD", "0.33333333333333333333"),  # 1/3: 20 places, half-even
        (2, "EUR", 3, "USD", "0.66666666666666666667"),
        (1_337, "EUR", 20_000, "KRW", "0.0006685"),
        (20_000, "KRW", 1_337, "EUR", "1495.88631264023934181002"),
        (1_000, "BHD", 265, "USD", "0.37735849056603773585"),  # exponent 3 against 2
        (MAX_AMOUNT, "JPY", 1, "CLF", "10000000000000000000"),  # the largest rate there is
    ],
)
def test_the_rate_is_billing_over_merchant_in_major_units(
    amount, currency, merchant_amount, merchant_currency, rate
):
    derived = conversion_rate(
        amount=amount,
        currency=currency,
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
    )
    assert derived == Decimal(rate)
    assert derived.as_tuple().exponent == -RATE_PLACES
    assert (
        amount_at_rate(
            merchant_amount=merchant_amount,
            merchant_currency=merchant_currency,
            rate=derived,
            currency=currency,
        )
        == amount
    )


CURRENCIES = ["JPY", "EUR", "BHD", "CLF", "KRW", "USD"]  # exponents 0, 2, 3, 4


@given(
    amount=st.integers(1, MAX_AMOUNT),
    merchant_amount=st.integers(1, MAX_AMOUNT),
    currency=st.sampled_from(CURRENCIES),
    merchant_currency=st.sampled_from(CURRENCIES),
)
def test_the_rate_applied_to_the_merchant_amount_gives_the_billing_amount_back(
    amount, merchant_amount, currency, merchant_currency
):
    rate = conversion_rate(
        amount=amount,
        currency=currency,
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
    )
    assert rate > 0 and len(rate.as_tuple().digits) <= 40  # fits numeric(40, 20)
    back = amount_at_rate(
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
        rate=rate,
        currency=currency,
    )
    assert back == amount
    # The exact quotient is within half a unit of the rate's last place.
    exact = Fraction(amount * 10 ** currency_exponent(merchant_currency)) / (
        merchant_amount * 10 ** currency_exponent(currency)
    )
    assert abs(Fraction(rate) - exact) <= Fraction(1, 2 * 10**RATE_PLACES)


def test_the_stored_rate_is_the_derived_one_to_the_last_place(api_v2):
    f = funded(api_v2)
    body = approved(api_v2, f.card_id, 1, merchantAmount=3, merchantCurrency="USD")

    assert body["conversionRate"] == "0.33333333333333333333"
    stored = Authorization.objects.get(pk=body["authorizationId"]).conversion_rate
    assert stored == Decimal("0.33333333333333333333")
    assert (
        created(authorize(api_v2, f.card_id, 1, merchantAmount=1, merchantCurrency="JPY"), "v2")[
            "conversionRate"
        ]
        == "0.01"
    )
