"""Posting at period end and the settlement before a close (docs/interest.md, "Posting",
"Closing an account"): months by hand under act/365F, the residue carried, half up then
down, the tax withheld, overdraft interest taken beyond the limit from a frozen account, the
job run twice, verify_ledger, the API, another institution. Every figure by hand
(tests/interest/accruing.py: a holds 1,000, b 10,000, at 3.65 % and overdrafts at 7.3 %; its
terms post quarterly, round half up and withhold 26.375 %, tests/interest/helpers.py)."""

from dataclasses import asdict
from datetime import date
from decimal import Decimal
from fractions import Fraction

import pytest

from accounts.models import Account, Journal
from accounts.verification import ledger_breaches
from events.models import Event
from interest.accrual import interest_accrue
from interest.models import InterestPosting
from interest.posting import interest_post
from jobs import tasks
from tests.accounts.api.helpers import adjust, created, resource
from tests.accounts.api.test_statements import Clock, csv_of, pdf_text, statement
from tests.conftest import Api, error_of
from tests.factories import issue_key

from .accruing import accruing_world, utc
from .helpers import terms_created

pytestmark = pytest.mark.django_db


def balances(fi) -> dict[str, int]:
    return dict(
        Account.objects.filter(
            institution=fi, kind="internal", internal_code__startswith="interest"
        ).values_list("internal_code", "posted")
    )


def dec(value: Decimal) -> str:
    return f"{value.normalize():f}"


def rows_of(account_id) -> list[tuple]:
    return [
        (
            p.kind,
            p.first_day.isoformat(),
            p.last_day.isoformat(),
            p.trigger,
            dec(p.accrued),
            dec(p.carried_in),
            p.amount,
            dec(p.carried_out),
            p.withholding_tax,
        )
        for p in InterestPosting.objects.filter(account_id=account_id).order_by("last_day", "kind")
    ]


def test_months_posted_with_the_residue_carried(api_v2, institution, other_institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        a, b = world["a"], world["b"]
        # From April: rounded down, 25 % withheld.
        product = Account.objects.get(pk=a).product_id
        terms_created(
            api_v2,
            product,
            effectiveDate="2027-04-01",
            dayCount="act_365f",
            tiering="whole",
            depositTiers=[{"fromBalance": 0, "rate": "3.65"}],
            minimumBalance=0,
            overdraftRate="7.3",
            postingFrequency="monthly",
            rounding="down",
            withholdingTaxRate="25",
        )
        # a: 1,000 on the 1st and 2nd (0.1 a day), -2,000 from the 3rd (0.4 a day owed), its
        # limit lowered to what it uses; then frozen. b: frozen too (credits still come in).
        clock.set(utc("2027-03-03T12:00:00"))
        assert adjust(api_v2, a, "debit", 3_000).status_code == 201
        assert api_v2.patch(f"/accounts/{a}", {"overdraftLimit": 2_000}).status_code == 200
        for account in (a, b):
            assert api_v2.patch(f"/accounts/{account}", {"status": "frozen"}).status_code == 200

        # The 1 April: March accrued, then posted; again, nothing more.
        clock.set(utc("2027-04-01T01:00:00"))
        interest_accrue()
        # March accrued, not posted: b does not close (checked before its balance).
        unposted = api_v2.patch(f"/accounts/{b}", {"status": "closed"})
        progress = []
        march = tasks.post_interest(timestamp=0)
        again = tasks.post_interest(timestamp=0)
        shown = resource(api_v2.get(f"/accounts/{a}/interest"), "v2")

        # The 1 May: April, from the balances the March postings left (value-dated to the
        # 1 April's first instant).
        clock.set(utc("2027-05-01T01:00:00"))
        interest_accrue()
        april = asdict(
            interest_post(on_progress=lambda done, total: progress.append((done, total)))
        )
        elsewhere = Api("v2", issue_key(other_institution)[1]).get(f"/accounts/{a}/interest")
        # The March postings on April's statements (made on the 1 April).
        on_statement = {
            account: statement(api_v2, account, "2027-04-01", "2027-04-30")["lines"]
            for account in (a, b)
        }
        on_csv = csv_of(api_v2, a, "2027-04-01", "2027-04-30")
        on_pdf = " ".join(pdf_text(api_v2, a, "2027-04").split())

    assert error_of(unposted, "v2")["code"] == "interest_not_posted"
    assert march == {"periods": 2, "postings": 3, "journals": 2}
    assert again == {"periods": 0, "postings": 0, "journals": 0}
    assert april == {"periods": 2, "postings": 2, "journals": 2}
    assert progress == [(2, 2)]
    # a. March (a quarter's end), half up: deposits 0.2 -> 0 (0.2 carried); overdraft
    # 29 * 0.4 = 11.6 -> 12 (-0.4 carried). April, down: -2,012 * 7.3 % / 365 = 0.4024 a
    # day, 12.072 - 0.4 = 11.672 -> 11 (0.672 carried); no deposit day, its 0.2 stays carried.
    assert rows_of(a) == [
        ("deposit", "2027-03-01", "2027-03-31", "period_end", "0.2", "0", 0, "0.2", 0),
        ("overdraft", "2027-03-01", "2027-03-31", "period_end", "11.6", "0", 12, "-0.4", 0),
        ("overdraft", "2027-04-01", "2027-04-30", "period_end", "12.072", "-0.4", 11, "0.672", 0),
    ]
    # b. March: 31 -> 31, 26.375 % withheld: 8.17625 -> 8. April: 10,023 at 1.0023 a day,
    # 30.069 -> 30, 25 % withheld: 7.5 -> 7 (down).
    assert rows_of(b) == [
        ("deposit", "2027-03-01", "2027-03-31", "period_end", "31", "0", 31, "0", 8),
        ("deposit", "2027-04-01", "2027-04-30", "period_end", "30.069", "0", 30, "0.069", 7),
    ]
    # Taken from the frozen a beyond its limit: 23 below it, its network_overdraft.
    owing = Account.objects.get(pk=a)
    assert (owing.status, owing.posted, owing.available, owing.network_overdraft) == (
        "frozen",
        -2_023,
        -23,
        23,
    )
    assert Account.objects.get(pk=b).posted == 10_000 + 31 - 8 + 30 - 7
    # Over the two months the postings are the exact accruals less the residue carried out.
    for account in (a, b):
        for kind in ("deposit", "overdraft"):
            rows = InterestPosting.objects.filter(account_id=account, kind=kind)
            accrued = sum((Fraction(r.accrued) for r in rows), Fraction(0))
            posted = sum(r.amount for r in rows)
            last = rows.order_by("-last_day").first()
            assert posted == accrued - Fraction(last.carried_out if last else 0)
            assert abs(posted - accrued) < 1

    # One journal per account and period, value-dated to the period's end.
    journal = InterestPosting.objects.get(account_id=b, last_day=date(2027, 4, 30)).journal
    assert (journal.kind, journal.value_at) == (Journal.Kind.INTEREST_POSTING, utc("2027-05-01"))
    legs = journal.entries.values_list("account__internal_code", "direction", "amount")
    assert sorted(legs, key=lambda leg: leg[0] or "") == [
        (None, "credit", 23),
        ("interest_payable", "debit", 30),
        ("interest_withholding_tax", "credit", 7),
    ]
    # Payable: booked and not posted; receivable likewise; the tax withheld.
    book = balances(institution)
    assert book["interest_withholding_tax"] == 8 + 7
    assert book["interest_payable"] >= 0 and book["interest_receivable"] <= 0
    posted_events = Event.objects.filter(type="interest.posted").order_by("created_at")
    assert posted_events.count() == 4
    first = posted_events.filter(object_id=a).first()
    assert (first.actor_type, first.object_type) == ("system", "account")
    assert first.data["overdraft_amount"] == 12 and first.data["last_day"] == "2027-03-31"

    # On the statements (docs/interest.md, "On statements"), the effective rate by hand: the
    # posted amount / the average of the period's balances that owed or earned it / its year
    # fraction. a: 12 / (29 days of 2,000 over 31 days) / (31/365) = 12 * 365 / 58,000 =
    # 7.55172...%; b: 31 / 10,000 / (31/365) = 3.65 %, its 8 withheld.
    overdrawn = (
        "Overdraft interest 2027-03-01 to 2027-03-31: daily balance, act/365F, "
        "effective 7.5517 % a year"
    )
    earned = (
        "Interest on deposits 2027-03-01 to 2027-03-31: daily balance, act/365F, "
        "effective 3.6500 % a year; 0.31 EUR less 0.08 EUR tax withheld"
    )
    assert [
        (line["type"], line["amount"], line["category"], line["description"])
        for line in on_statement[a]
    ] == [("CashDec", 12, "interest", overdrawn)]
    assert [
        (line["type"], line["amount"], line["category"], line["description"])
        for line in on_statement[b]
    ] == [("CashInc", 23, "interest", earned)]
    assert [(row["type"], row["amount"], row["description"]) for row in on_csv] == [
        ("CashDec", "0.12", overdrawn)
    ]
    assert overdrawn in on_pdf
    assert ledger_breaches() == []

    # GET on the 1 April, posted: nothing accrued since, the residue, the last postings.
    assert shown["accruedFrom"] == "2027-04-01" and shown["accruedThrough"] == "2027-03-31"
    assert shown["accrued"]["deposit"] == "0.000000000000"
    assert (shown["carried"]["deposit"], shown["carried"]["overdraftExact"]) == (
        "0.200000000000",
        "-2/5",
    )
    assert shown["terms"]["rounding"] == "down"  # April's, in effect on the 1st
    assert shown["period"] == {"start": "2027-04-01", "end": "2027-04-30", "frequency": "monthly"}
    assert [(p["kind"], p["amount"]) for p in shown["lastPostings"]] == [
        ("deposit", 0),
        ("overdraft", 12),
    ]
    assert elsewhere.status_code == 404

    # Another institution untouched; verify_ledger names a posting that is not its accruals.
    assert not InterestPosting.objects.filter(institution=other_institution).exists()
    InterestPosting.objects.filter(account_id=b, last_day=date(2027, 3, 31)).update(
        accrued=Decimal("32")
    )
    assert {breach.check for breach in ledger_breaches()} == {
        "interest postings that are not their period's accruals and adjustments",
        "interest postings that are not their accruals plus the residue carried, or carry a "
        "residue past their rounding",
    }


def test_an_account_closed_mid_period(api_v2, institution, other_institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        b = world["b"]
        # The 15th: the 1st to the 14th accrued (not yet by the job): 14. b's money out, it
        # cannot close: the interest is not posted.
        clock.set(utc("2027-03-15T10:00:00"))
        refused = api_v2.patch(f"/accounts/{b}", {"status": "closed"})
        # Settled: accrued through the 14th and posted now (26.375 % of 14 withheld: 4, half
        # up); the 15th earns nothing.
        settled = api_v2.post(f"/accounts/{b}/interest/settlements", {})
        twice = api_v2.post(f"/accounts/{b}/interest/settlements", {})
        withdrawn = adjust(api_v2, b, "debit", 10_010)
        assert withdrawn.status_code == 201, withdrawn.json()
        closed = api_v2.patch(f"/accounts/{b}", {"status": "closed"})
        after = api_v2.post(f"/accounts/{b}/interest/settlements", {})
        elsewhere = Api("v2", issue_key(other_institution)[1]).post(
            f"/accounts/{b}/interest/settlements", {}
        )
        # The job later: the rest of March accrues nothing for b (closed, empty), posts nothing.
        clock.set(utc("2027-04-01T01:00:00"))
        interest_accrue()
        report = tasks.post_interest(timestamp=0)

    assert refused.status_code == 422 and error_of(refused, "v2")["code"] == "interest_not_posted"
    body = created(settled, "v2")
    assert settled.status_code == 201 and body["through"] == "2027-03-14"
    assert [
        (p["kind"], p["firstDay"], p["lastDay"], p["trigger"], p["accrued"], p["amount"])
        for p in body["postings"]
    ] == [("deposit", "2027-03-01", "2027-03-14", "settlement", "14.000000000000", 14)]
    assert created(twice, "v2")["postings"] == []
    event = Event.objects.get(type="interest.posted", object_id=b)
    assert (event.actor_type, event.data["trigger"]) == ("apiKey", "settlement")
    assert closed.status_code == 200
    assert after.status_code == 422 and error_of(after, "v2")["code"] == "account_not_active"
    assert elsewhere.status_code == 404
    assert report["postings"] == 1  # a's March, not b's
    assert rows_of(b) == [
        ("deposit", "2027-03-01", "2027-03-14", "settlement", "14", "0", 14, "0", 4)
    ]
    assert Account.objects.get(pk=b).posted == 0
    assert ledger_breaches() == []
