from core.management.base import TXCommand
from core.management.progress import ProgressBar
from interest.posting import interest_post


class Command(TXCommand):
    help = (
        "Post interest: every posting period that has ended and whose last day the accrual has "
        "booked is posted to its accounts, one journal per account and period, once however "
        'many runs; missed periods are caught up (docs/interest.md, "The posting job"). Safe to '
        "run from several machines at once. The job post_interest runs it hourly. Progress "
        "(accounts) on stderr."
    )

    def handle(self, *args, **options):
        with ProgressBar(self.stderr) as bar:
            report = self.run_batches(interest_post, on_progress=bar.update)
        self.stdout.write(
            f"Interest posted: {report.periods} period(s), {report.postings} posting(s), "
            f"{report.journals} journal(s)."
        )
