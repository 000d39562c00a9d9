"""The dashboard's work queues: each count right, limited to the user's institutions, and
each link listing exactly the rows counted (docs/back-office.md)."""

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import Hold
from accounts.selectors import holds_expiring_today
from disputes.models import DisputeDeadline
from monitoring.models import MonitoringAlert
from monitoring.services import alert_resolve
from tests.api.test_scopes import World
from tests.backoffice.helpers import UNKNOWN_PAN, populated, staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

QUEUE = re.compile(
    r'<tr class="work-queue">\s*<th scope="row">([^<]+)<br>.*?'
    r'<a class="work-queue-count" href="([^"]+)">(\d+)</a>',
    re.S,
)


def queues(client) -> dict[str, tuple[int, str]]:
    page = client.get(reverse("admin:index"))
    assert page.status_code == 200
    return {
        name: (int(count), url.replace("&amp;", "&"))
        for name, url, count in QUEUE.findall(page.content.decode())
    }


def listed(client, url) -> int:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.context["cl"].result_count


@pytest.fixture
def worlds(settings):
    settings.PAN_GUESSING_MAX_FAILURES = 2
    mine, theirs = make_institution(), make_institution()
    worlds = {mine: populated(mine), theirs: populated(theirs)}
    # Mine: a second failed PAN lookup, so its key reaches the threshold.
    worlds[mine].api.post("/card-lookups", {"pan": UNKNOWN_PAN})
    # Mine: the hold expires within the hour; theirs next week.
    now = timezone.now()
    Hold.objects.filter(institution=mine).update(expires_at=now + timedelta(minutes=30))
    Hold.objects.filter(institution=theirs).update(expires_at=now + timedelta(days=7))
    # Both: the dispute's filing deadline found approaching by the deadline job (the job's
    # own rules are tests/disputes/test_deadlines.py's).
    DisputeDeadline.objects.filter(dispute__institution__in=[mine, theirs]).update(
        approaching_at=now
    )
    return mine, theirs, worlds


def test_the_dashboard_counts_each_queue_and_links_to_its_rows(admin_client, worlds):
    mine, theirs, _ = worlds
    # Holds expiring "today" depend on the clock: after 23:30 in the institution's time zone
    # the hold expiring in 30 minutes falls on tomorrow.
    zone = ZoneInfo(mine.time_zone)
    day = timezone.now().astimezone(zone).date()
    active = Hold.objects.filter(institution=mine, status=Hold.Status.ACTIVE)
    expiring = active.values_list("expires_at", flat=True)
    today = sum(expires.astimezone(zone).date() == day for expires in expiring)
    shown = queues(admin_client)

    assert {name: count for name, (count, _) in shown.items()} == {
        # Case work: nothing assigned yet (tests/backoffice/test_case_work.py).
        "Disputes assigned to me": 0,
        "Monitoring alerts assigned to me": 0,
        "Reconciliation breaks assigned to me": 0,
        "Approvals waiting": 2,  # each world's, asked for by another staff user
        "Open monitoring alerts": 2,
        "Disputes due": 2,
        "Failed webhook deliveries": 2,
        "Holds expiring today": today,
        "API keys and staff users suspected of PAN guessing": 1,
    }
    for name, (count, url) in shown.items():
        if name != "API keys and staff users suspected of PAN guessing":
            assert listed(admin_client, url) == count, name
    # The guessing queue links to the window's failures: 2 of mine, 1 of theirs.
    assert listed(admin_client, shown["API keys and staff users suspected of PAN guessing"][1]) == 3


def test_a_limited_user_counts_only_their_institutions(client, worlds):
    mine, theirs, _ = worlds
    reviewer = staff("earlier")
    for alert in MonitoringAlert.objects.filter(institution=theirs):
        alert_resolve(alert=alert, user=reviewer, note="Checked.")
    sign_in(client, staff("ops", roles=["operations"], institutions=[theirs]))

    shown = queues(client)

    assert {name: count for name, (count, _) in shown.items()} == {
        "Disputes assigned to me": 0,  # operations work disputes and breaks, not alerts
        "Reconciliation breaks assigned to me": 0,
        "Open monitoring alerts": 0,
        "Disputes due": 1,
        "Failed webhook deliveries": 1,
        "Holds expiring today": 0,
        "API keys and staff users suspected of PAN guessing": 0,
    }
    for name, (count, url) in shown.items():
        if name != "API keys and staff users suspected of PAN guessing":
            assert listed(client, url) == count, name


def test_a_queue_is_shown_only_to_who_may_view_its_rows(client, worlds):
    user = staff("nobody-special")
    sign_in(client, user)
    page = client.get(reverse("admin:index"))
    assert page.status_code == 200
    assert 'id="work-queues"' not in page.content.decode()


def test_the_dashboard_is_branded(admin_client):
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "<title>Today&#x27;s work | TX back office</title>" in page
    assert "Django administration" not in page


def test_today_is_the_institutions_own_day():
    """At 20:00 UTC on 24 November it is already the 25th in Auckland (UTC+13) and still the
    24th in New York (UTC-5)."""
    auckland = make_institution(time_zone="Pacific/Auckland")
    new_york = make_institution(time_zone="America/New_York")
    now = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)
    holds = {fi: Hold.objects.get(pk=World("v2", fi)["hold"]) for fi in (auckland, new_york)}
    cases = {
        # expires at (UTC) -> (on Auckland's today, on New York's today)
        datetime(2026, 11, 24, 10, 59, tzinfo=UTC): (False, True),  # Auckland: 24th 23:59
        datetime(2026, 11, 24, 11, 0, tzinfo=UTC): (True, True),  # Auckland: 25th 00:00
        datetime(2026, 11, 25, 4, 59, tzinfo=UTC): (True, True),  # New York: 24th 23:59
        datetime(2026, 11, 25, 5, 0, tzinfo=UTC): (True, False),  # New York: 25th
        datetime(2026, 11, 25, 10, 59, tzinfo=UTC): (True, False),  # Auckland: 25th 23:59
        datetime(2026, 11, 25, 11, 0, tzinfo=UTC): (False, False),
    }
    for expires_at, expected in cases.items():
        Hold.objects.filter(pk__in=[h.pk for h in holds.values()]).update(expires_at=expires_at)
        found = set(holds_expiring_today(Hold.objects.all(), now=now).values_list("pk", flat=True))
        assert (holds[auckland].pk in found, holds[new_york].pk in found) == expected, expires_at
    # Only active holds are a queue.
    Hold.objects.filter(pk=holds[new_york].pk).update(
        status="released",
        closed_at=now,
        expires_at=datetime(2026, 11, 24, 21, 0, tzinfo=UTC),
    )
    assert not holds_expiring_today(Hold.objects.filter(pk=holds[new_york].pk), now=now).exists()
