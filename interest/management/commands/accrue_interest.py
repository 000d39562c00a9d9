from datetime import datetime

from django.core.management.base import CommandError
from django.utils import timezone

from core.management.base import TXCommand
from core.management.progress import ProgressBar
from interest.accrual import interest_accrue


def _instant(text: str) -> datetime:
    """An ISO 8601 instant with its offset ("2027-03-06T00:30:00+00:00"): a naive one would be
    read in some zone nobody chose."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--now must be an ISO 8601 instant, not {text!r}.") from None
    if moment.tzinfo is None:
        raise CommandError("--now needs its offset (+00:00, Z): the days end in each zone.")
    return moment


class Command(TXCommand):
    help = (
        "Accrue interest: every day ended in each institution's time zone and not yet accrued "
        "gets the interest of its accounts with terms stored and booked, once each however "
        'many runs; missed days are caught up (docs/interest.md, "The accrual job"). Safe to '
        "run from several machines at once. The job accrue_interest runs it hourly. Progress "
        "(days of an institution's books in a currency) on stderr."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--now",
            metavar="INSTANT",
            help="Accrue the days ended by this instant (ISO 8601 with offset) instead of now: "
            "a catch-up to a chosen point. A day not ended by the real now is never accrued.",
        )

    def handle(self, *args, now: str | None = None, **options):
        moment = None if now is None else _instant(now)
        if moment is not None and moment > timezone.now():
            raise CommandError("--now must not be in the future: a day not ended never accrues.")
        with ProgressBar(self.stderr) as bar:
            report = self.run_batches(interest_accrue, now=moment, on_progress=bar.update)
        self.stdout.write(
            f"Interest accrued: {report.days} day(s) of books, {report.accruals} accrual(s), "
            f"{report.journals} journal(s)."
        )
