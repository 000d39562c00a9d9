"""A dispute's deadlines (issue 32 item 5; docs/disputes.md, "Deadlines"): set from its card
product's dispute policy in business days of the institution's calendar (its weekend, its
holidays, its time zone), met by its moves, and the deadline job run at chosen instants (a
frozen clock: `now=`): `dispute.deadline_approaching` and `dispute.deadline_missed` once each,
a draft past its filing deadline closed `expired`."""

from datetime import date, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from authorizations.models import Authorization
from core import operations
from core.actors import SYSTEM
from disputes.models import DisputeDeadline
from disputes.services.watch import disputes_watch_deadlines
from institutions.calendar import local_date
from institutions.services import holiday_add
from jobs import tasks
from tests.accounts.api.helpers import balances, listed, money
from tests.authorizations.helpers import START, event_data
from tests.cards.api.helpers import product_rid

from .helpers import PAID, dispute_of, filed, moved, payment, split

pytestmark = pytest.mark.django_db

FRIDAY = "2026-11-20T15:00:00.000Z"  # Friday 20 November 2026, in UTC and in New York


def policy(api, institution, name: str, zone: str = "UTC") -> None:
    """The standard prepaid product's dispute policy, and the institution's time zone."""
    rid = product_rid(api, "PREPAID_STANDARD")
    response = api.patch(f"/products/cards/{rid}", {"disputePolicy": name})
    assert response.status_code == 200, response.content
    institution.time_zone = zone
    institution.save(update_fields=["time_zone"])


def due(dispute: dict) -> dict[str, str]:
    return {deadline["name"]: deadline["dueOn"] for deadline in dispute["deadlines"]}


def filing_due(p, institution) -> str:
    """120 days after the presentment, moved past the weekend (no holiday in that range)."""
    presented = Authorization.objects.get(pk=p.authorization_id).presented_at
    day = local_date(institution, presented) + timedelta(days=120)
    while day.isoweekday() in (6, 7):
        day += timedelta(days=1)
    return day.isoformat()


def watch(at: str) -> dict[str, int]:
    now = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return operations.run_batches(disputes_watch_deadlines, actor=SYSTEM, now=now)


def counts(approaching, missed, expired, credited=0, reversed=0) -> dict[str, int]:
    """What a run of the deadline job reports."""
    return {
        "approaching": approaching,
        "missed": missed,
        "expired": expired,
        "credited": credited,
        "reversed": reversed,
    }


def test_reg_e_counts_business_days_across_the_weekend_and_a_holiday(api_v2, institution):
    policy(api_v2, institution, "regE")
    holiday_add(institution=institution, date=date(2026, 11, 26), name="Thanksgiving")
    p = payment(api_v2)

    body = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)

    # 10 business days after Friday 20 November, Thursday 26 a holiday: Monday 7 December.
    # 45 days after it: Monday 4 January 2027.
    assert due(body) == {
        "provisional_credit": "2026-12-07",
        "resolution": "2027-01-04",
        "network_filing": filing_due(p, institution),
    }
    assert all(d["metAt"] is None and d["missedAt"] is None for d in body["deadlines"])


def test_a_day_count_ending_on_a_day_off_moves_to_the_next_business_day(api_v2, institution):
    policy(api_v2, institution, "regE")
    holiday_add(institution=institution, date=date(2027, 1, 4), name="Bank holiday")
    p = payment(api_v2)

    body = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)

    assert due(body)["resolution"] == "2027-01-05"


def test_psd2_counts_in_the_institutions_time_zone(api_v2, institution):
    policy(api_v2, institution, "psd2", zone="America/New_York")
    p = payment(api_v2)

    # 03:00Z on Friday is still Thursday evening in New York: 1 business day after Thursday.
    body = filed(api_v2, p.authorization_id, cardholderContactedAt="2026-11-20T03:00:00Z")

    assert due(body)["provisional_credit"] == "2026-11-20"
    # 15 business days after Thursday 19 November.
    assert due(body)["resolution"] == "2026-12-10"


def test_a_custom_weekend(api_v2, institution):
    institution.weekend_days = [5, 6]  # Friday and Saturday
    institution.save(update_fields=["weekend_days"])
    policy(api_v2, institution, "psd2")
    p = payment(api_v2)

    body = filed(api_v2, p.authorization_id, cardholderContactedAt="2026-11-19T10:00:00Z")

    # 1 business day after Thursday 19: Friday and Saturday off, Sunday 22.
    assert due(body)["provisional_credit"] == "2026-11-22"


def test_no_policy_has_only_the_network_filing_deadline(api_v2, institution):
    p = payment(api_v2)

    body = filed(api_v2, p.authorization_id)

    assert due(body) == {"network_filing": filing_due(p, institution)}


def test_submission_meets_the_credit_and_filing_deadlines_closing_meets_all(api_v2, institution):
    policy(api_v2, institution, "regE")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)["disputeId"]

    submitted = moved(api_v2, dispute_id, "submitted")
    met = {d["name"]: d["metAt"] is not None for d in submitted["deadlines"]}
    assert met == {"provisional_credit": True, "network_filing": True, "resolution": False}

    closed = moved(api_v2, dispute_id, "closed", outcome="denied")
    assert all(d["metAt"] is not None for d in closed["deadlines"])


def test_the_job_warns_once_and_reports_a_miss_once(api_v2, institution):
    policy(api_v2, institution, "regE")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)["disputeId"]
    # Provisional credit due Friday 4 December (no holiday this time).

    assert watch("2026-12-01T12:00:00Z") == counts(0, 0, 0)
    # Wednesday 2: the 4th is 2 business days away.
    assert watch("2026-12-02T12:00:00Z") == counts(1, 0, 0)
    assert watch("2026-12-03T12:00:00Z") == counts(0, 0, 0)
    # Still in time on the day itself.
    assert watch("2026-12-04T23:00:00Z") == counts(0, 0, 0)
    assert watch("2026-12-05T00:30:00Z") == counts(0, 1, 0)
    assert watch("2026-12-06T00:30:00Z") == counts(0, 0, 0)

    [approaching] = event_data(api_v2, "dispute.deadline_approaching", dispute_id)
    [missed] = event_data(api_v2, "dispute.deadline_missed", dispute_id)
    assert (approaching["deadline"], approaching["dueOn"]) == ("provisional_credit", "2026-12-04")
    assert (missed["deadline"], missed["dueOn"]) == ("provisional_credit", "2026-12-04")
    deadline = {d["name"]: d for d in dispute_of(api_v2, dispute_id)["deadlines"]}
    assert deadline["provisional_credit"]["missedAt"] == "2026-12-05T00:30:00.000Z"
    assert dispute_of(api_v2, dispute_id)["status"] == "draft"  # a missed credit closes nothing


def test_a_draft_past_its_filing_deadline_expires(api_v2, institution):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    after = date.fromisoformat(filing_due(p, institution)) + timedelta(days=1)

    ran = watch(f"{after.isoformat()}T12:00:00Z")

    assert ran == counts(0, 1, 1)
    expired = dispute_of(api_v2, dispute_id)
    assert (expired["status"], expired["outcome"]) == ("closed", "expired")
    assert split(expired) == (0, PAID, 0, 0)
    assert [step["kind"] for step in expired["steps"]] == ["created", "closed"]
    assert balances(api_v2, p.account_id) == money(START - PAID)
    assert Authorization.objects.get(pk=p.authorization_id).disputed_amount == 0
    assert event_data(api_v2, "dispute.closed", dispute_id)[0]["outcome"] == "expired"


def test_the_disputes_due_queue(api_v2, institution):
    policy(api_v2, institution, "regE")
    p = payment(api_v2, 2 * PAID)
    soon = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)["disputeId"]
    later = filed(api_v2, p.authorization_id, cardholderContactedAt="2026-11-25T10:00:00Z")[
        "disputeId"
    ]

    def due_by(day):
        items, _ = listed(api_v2.get("/disputes", {"dueBy": day}))
        return [item["disputeId"] for item in items]

    assert due_by("2026-12-03") == []
    assert due_by("2026-12-04") == [soon]
    assert due_by("2026-12-09") == [later, soon]
    moved(api_v2, soon, "submitted")  # credited: its credit deadline is met
    assert due_by("2026-12-09") == [later]


def test_the_command_watches_the_deadlines_now(api_v2, institution):
    """`manage.py watch_dispute_deadlines`, the job's service run now: a deadline due today
    is approaching; a draft whose filing deadline was yesterday is missed and expires."""
    policy(api_v2, institution, "regE")
    now = timezone.now()
    today = local_date(institution, now)
    # Contacted now: the policy's own deadlines are 10 business days and 45 days away, whatever
    # the day the test runs; only the two set below are due.
    contacted = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    approaching, late = (
        filed(api_v2, payment(api_v2).authorization_id, cardholderContactedAt=contacted)[
            "disputeId"
        ]
        for _ in range(2)
    )
    DisputeDeadline.objects.filter(dispute_id=approaching, name="resolution").update(due_on=today)
    DisputeDeadline.objects.filter(dispute_id=late, name="network_filing").update(
        due_on=today - timedelta(days=1)
    )

    def command() -> str:
        out = StringIO()
        call_command("watch_dispute_deadlines", stdout=out)
        return out.getvalue()

    assert command() == (
        "Dispute deadlines: 1 approaching, 1 missed; 1 draft(s) expired, 0 credited by their "
        "deadline, 0 held reversal(s) posted.\n"
    )
    [warned] = event_data(api_v2, "dispute.deadline_approaching", approaching)
    assert (warned["deadline"], warned["dueOn"]) == ("resolution", today.isoformat())
    assert dispute_of(api_v2, late)["outcome"] == "expired"
    # Each once: the next run finds nothing to do.
    assert command() == (
        "Dispute deadlines: 0 approaching, 0 missed; 0 draft(s) expired, 0 credited by their "
        "deadline, 0 held reversal(s) posted.\n"
    )


def test_the_job_runs_through_procrastinate(api_v2, institution):
    p = payment(api_v2)
    filed(api_v2, p.authorization_id)

    assert tasks.watch_dispute_deadlines(timestamp=0) == counts(0, 0, 0)
