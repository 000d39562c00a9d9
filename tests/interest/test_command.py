"""`manage.py accrue_interest` (docs/interest.md, "The accrual job"): the job's run with its
progress on stderr and its counts on stdout; `--now` accrues the days ended by an earlier
instant (a catch-up to a chosen point), the next run the rest; a bad `--now` is refused.
`manage.py post_interest` ("The posting job") likewise, once a period."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from interest.models import AccrualBook, InterestAccrual
from tests.accounts.api.test_statements import Clock

from .accruing import accruing_world, utc

pytestmark = pytest.mark.django_db


def accrue(command="accrue_interest", **options) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(command, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def test_the_command_accrues_to_now_or_to_a_chosen_instant(api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        accruing_world(api_v2, postingFrequency="monthly")
        clock.set(utc("2027-03-06T00:30:00"))
        refused = []
        for bad in ("yesterday", "2027-03-03T01:00:00", "2027-03-07T00:00:00+00:00"):
            with pytest.raises(CommandError) as error:
                accrue(now=bad)
            refused.append(str(error.value))
        assert not InterestAccrual.objects.exists()

        # To the 3rd at 01:00: the 1st and 2nd; then to now: the 3rd to the 5th; then nothing.
        runs = [accrue(now="2027-03-03T01:00:00+00:00"), accrue(), accrue()]
        through = AccrualBook.objects.get(institution=institution).accrued_through
        accruals = InterestAccrual.objects.count()
        # March accrued on the 1 April: posted once (a and b, monthly), then nothing.
        clock.set(utc("2027-04-01T00:30:00"))
        accrue()
        posted = [accrue("post_interest"), accrue("post_interest")]

    assert refused == [
        "--now must be an ISO 8601 instant, not 'yesterday'.",
        "--now needs its offset (+00:00, Z): the days end in each zone.",
        "--now must not be in the future: a day not ended never accrues.",
    ]
    assert [out for out, _ in runs] == [
        "Interest accrued: 2 day(s) of books, 4 accrual(s), 2 journal(s).\n",
        "Interest accrued: 3 day(s) of books, 6 accrual(s), 3 journal(s).\n",
        "Interest accrued: 0 day(s) of books, 0 accrual(s), 0 journal(s).\n",
    ]
    # Not a terminal: the progress's final line only.
    assert [err.strip() for _, err in runs] == [
        f"[{'#' * 30}] 2/2",
        f"[{'#' * 30}] 3/3",
        f"[{'#' * 30}] 0/0",
    ]
    assert through.isoformat() == "2027-03-05"
    assert accruals == 10
    assert posted == [
        ("Interest posted: 2 period(s), 2 posting(s), 2 journal(s).\n", f"[{'#' * 30}] 2/2\n"),
        ("Interest posted: 0 period(s), 0 posting(s), 0 journal(s).\n", f"[{'#' * 30}] 0/0\n"),
    ]
