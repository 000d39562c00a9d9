"""`GET /accounts/{accountId}/interest/days` (docs/interest.md, "The daily calculation"): each
day's end-of-day balance by value date in the institution's time zone, the terms in effect, the
exact accrual. Money is booked by the ledger's own services over HTTP on the days a test names
(the clock moved by hand, `Clock`), and every figure is computed by hand in the test."""

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Account
from accounts.selectors import (
    balance_at,
    value_balances_at,
    value_balances_of,
    value_balances_over,
)
from tests.accounts.api.helpers import (
    ANY,
    adjust,
    assert_error,
    assert_not_found,
    create_customer,
    created,
    unknown_id,
)
from tests.accounts.api.test_statements import Clock
from tests.authorizations.helpers import START, approved, funded, presented
from tests.conftest import Api
from tests.disputes.helpers import filed, moved
from tests.factories import issue_key

from .helpers import days_of, terms_created

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
US = timedelta(microseconds=1)


@pytest.fixture
def berlin(institution):
    institution.time_zone = "Europe/Berlin"
    institution.save(update_fields=["time_zone"])
    return institution


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def day_rows(body: dict) -> dict[str, tuple]:
    """date -> (balance, kind, rates, fraction, accrualExact, termsId)."""
    return {
        d["date"]: (
            d["balance"],
            d["kind"],
            [(r["amount"], r["rate"]) for r in d["rates"]],
            d["fraction"],
            d["accrualExact"],
            d["termsId"],
        )
        for d in body["days"]
    }


def test_a_month_crossing_zero_with_a_rate_change_on_the_15th(api_v2, berlin, other_institution):
    with Clock(utc("2024-01-01T09:00:00")) as clock:
        rid = created(
            api_v2.post(
                "/products/accounts",
                {
                    "code": "CBSFinancialContractTypeAPI",
                    "name": "Current account with interest",
                    "currency": "EUR",
                    "allowsOverdraft": True,
                    "maxOverdraftLimit": 1_000_000,
                },
            ),
            "v2",
        )["rid"]
        # To the 14th: act/360, banded, 3.6 % up to 1,000.00 and 7.2 % above.
        first = terms_created(
            api_v2,
            rid,
            effectiveDate="2024-01-01",
            dayCount="act_360",
            tiering="banded",
            depositTiers=[
                {"fromBalance": 0, "rate": "3.6"},
                {"fromBalance": 100_000, "rate": "7.2"},
            ],
            minimumBalance=0,
            overdraftRate="7.2",
        )["termsId"]
        # From the 15th: act/365F, the whole balance at 3.65 %, overdraft 7.3 %.
        second = terms_created(
            api_v2,
            rid,
            effectiveDate="2024-01-15",
            dayCount="act_365f",
            tiering="whole",
            depositTiers=[{"fromBalance": 0, "rate": "3.65"}],
            minimumBalance=0,
            overdraftRate="7.3",
        )["termsId"]
        body = {"customerId": create_customer(api_v2), "productRid": rid}
        account_id = created(api_v2.post("/accounts", body), "v2")["accountId"]
        assert (
            api_v2.patch(f"/accounts/{account_id}", {"overdraftLimit": 500_000}).status_code == 200
        )

        clock.set(utc("2024-01-03T09:00:00"))
        assert adjust(api_v2, account_id, "credit", 200_000).status_code == 201
        # 23:00 UTC on the 19th is midnight, the 20th's first instant, in Berlin: an overdraft
        # from the 20th.
        clock.set(utc("2024-01-19T23:00:00"))
        assert adjust(api_v2, account_id, "debit", 300_000).status_code == 201

        clock.set(utc("2024-02-01T12:00:00"))
        with CaptureQueriesContext(connection) as queries:
            body = days_of(api_v2, account_id, "2024-01-01", "2024-01-25")
        # (Read now: the next request empties the connection's log.)
        ledger = [q for q in queries.captured_queries if "accounts_entry" in q["sql"]]
        short = days_of(api_v2, account_id, "2024-01-18", "2024-01-20")

        # Validation, at the same instant: `to` must be a day that has ended in Berlin.
        for params, field in [
            ({"from": "2024-01-10", "to": "2024-01-09"}, "to"),
            ({"from": "2023-01-01", "to": "2024-01-02"}, "to"),  # 367 days
            ({"from": "2024-01-31", "to": "2024-02-01"}, "to"),  # today in Berlin
            ({"from": "2024-1-05", "to": "2024-01-09"}, "from"),
            ({"to": "2024-01-09"}, "from"),
        ]:
            response = api_v2.get(f"/accounts/{account_id}/interest/days", params)
            error = assert_error(response, "v2", 400, "validation_error", ANY)
            assert list(error["details"]) == [field]
        assert days_of(api_v2, account_id, "2023-01-31", "2024-01-31")["days"][0]["kind"] == "none"

    days = day_rows(body)
    assert (body["accountId"], body["currency"], len(days)) == (account_id, "EUR", 25)
    # The 1st and 2nd: nothing on the account, nothing accrues.
    assert days["2024-01-02"] == (0, "none", [], "1/360", "0/1", first)
    # 3rd to 14th: 2,000.00 banded: 100,000 * 3.6 % + 100,000 * 7.2 % = 3,600 + 7,200 = 10,800
    # a year of 360 days: 30 a day.
    for n in range(3, 15):
        assert days[f"2024-01-{n:02d}"] == (
            200_000,
            "deposit",
            [(100_000, "3.6"), (100_000, "7.2")],
            "1/360",
            "30/1",
            first,
        )
    # 15th to 19th: the new terms: 200,000 * 3.65 % / 365 = 20 a day. The debit at midnight
    # starting the 20th in Berlin (still the 19th in UTC) is not in the 19th.
    for n in range(15, 20):
        assert days[f"2024-01-{n:02d}"] == (
            200_000,
            "deposit",
            [(200_000, "3.65")],
            "1/365",
            "20/1",
            second,
        )
    # 20th to 25th: -1,000.00, overdraft: 100,000 * 7.3 % / 365 = 20 a day, owed by the customer.
    for n in range(20, 26):
        assert days[f"2024-01-{n:02d}"] == (
            -100_000,
            "overdraft",
            [(100_000, "7.3")],
            "1/365",
            "20/1",
            second,
        )
    assert body["days"][2]["accrual"] == "30.000000000000"
    # Never netted: deposit 12 * 30 + 5 * 20 = 460; overdraft 6 * 20 = 120.
    assert (body["depositTotal"], body["overdraftTotal"]) == (
        "460.000000000000",
        "120.000000000000",
    )
    # The balances are the value-dated balances just before each day's end in Berlin...
    account = Account.objects.get(pk=account_id)
    for d in body["days"]:
        end = datetime.combine(
            datetime.fromisoformat(d["date"]).date() + timedelta(days=1), time.min, BERLIN
        )
        assert d["balance"] == balance_at(account=account, at=end - US, value=True)[0]
    # ... read in one query for the whole range of 25 days.
    assert len(ledger) == 1
    assert [d["balance"] for d in short["days"]] == [200_000, 200_000, -100_000]

    # Another institution's key sees no such account; an unknown id neither.
    other = Api("v2", issue_key(other_institution)[1])
    for api, some_id in ((other, account_id), (api_v2, unknown_id("acct"))):
        response = api.get(
            f"/accounts/{some_id}/interest/days", {"from": "2024-01-01", "to": "2024-01-02"}
        )
        assert_not_found(response, "v2", "No account with this id.")


def test_a_back_valued_credit_changes_the_days_it_counts_in(api_v2, berlin):
    with Clock(utc("2026-11-02T09:00:00")) as clock:
        card = funded(api_v2)  # 100.00 on the 2nd
        rid = Account.objects.get(pk=card.account_id).product_id
        terms_created(
            api_v2,
            rid,
            effectiveDate="2026-11-02",
            dayCount="act_365f",
            tiering="whole",
            depositTiers=[{"fromBalance": 0, "rate": "3.65"}],
            minimumBalance=0,
        )
        clock.set(utc("2026-11-05T10:00:00"))
        payment = approved(api_v2, card.card_id, 4_000)
        presented(api_v2, payment["authorizationId"])  # 60.00 left from the 5th

        clock.set(utc("2026-11-20T12:00:00"))
        before = days_of(api_v2, card.account_id, "2026-11-02", "2026-11-19")
        dispute_id = filed(api_v2, payment["authorizationId"])["disputeId"]
        moved(api_v2, dispute_id, "submitted")  # the provisional credit, valued on the 5th
        after = days_of(api_v2, card.account_id, "2026-11-02", "2026-11-19")

    # Before: 10,000 * 3.65 % / 365 = 1 a day on the 2nd to 4th; 6,000 gives 3/5 on the 5th to
    # 19th: 3 + 15 * 3/5 = 12.
    assert [d["balance"] for d in before["days"]] == [START] * 3 + [START - 4_000] * 15
    assert before["depositTotal"] == "12.000000000000"
    assert before["days"][3]["accrualExact"] == "3/5"
    # After: the credit counts from the 5th, booked on the 20th: 18 days of 1.
    assert [d["balance"] for d in after["days"]] == [START] * 18
    assert after["depositTotal"] == "18.000000000000"
    # The range's balances are `balance_at` by value date at each instant, back-valued money
    # included; the instants must increase.
    account = Account.objects.get(pk=card.account_id)
    instants = [
        utc("2026-11-02T08:00:00"),  # before the load
        utc("2026-11-05T09:59:59"),
        utc("2026-11-05T10:00:01"),  # after the payment, which the credit answers
        utc("2026-11-20T13:00:00"),
    ]
    balances = value_balances_at(account=account, instants=instants)
    assert balances == [0, START, START, START]
    assert balances == [balance_at(account=account, at=at, value=True)[0] for at in instants]
    # Many accounts at one instant (the accrual job's batches) read them the same way: the
    # account, and the institution's accounts that moved money with it.
    others = list(Account.objects.filter(institution_id=account.institution_id, kind="internal"))
    assert others
    for at in instants:
        assert value_balances_of(account_ids=[account.pk] + [o.pk for o in others], at=at) == {
            a.pk: balance_at(account=a, at=at, value=True)[0] for a in [account, *others]
        }
    # And many accounts at many instants (a product's preview), in one query.
    ids = [account.pk] + [o.pk for o in others]
    assert value_balances_over(account_ids=ids, instants=instants) == {
        a.pk: [balance_at(account=a, at=at, value=True)[0] for at in instants]
        for a in [account, *others]
    }
    assert value_balances_of(account_ids=[], at=instants[0]) == {}
    assert value_balances_at(account=account, instants=[]) == []
    with pytest.raises(ValueError, match="increase"):
        value_balances_at(account=account, instants=instants[::-1])
