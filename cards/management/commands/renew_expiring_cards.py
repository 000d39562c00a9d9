from django.core.management.base import CommandError

from cards.services import cards_expire, cards_renew_expiring
from core.management.base import TXCommand
from core.management.progress import ProgressBar


class Command(TXCommand):
    help = (
        "Expire the active cards whose validity has ended, then renew (same PAN, new expiry "
        "and CVV) the active and suspended cards whose validity ends within N days. Safe to "
        "run from several machines at once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--within-days",
            type=int,
            required=True,
            metavar="N",
            help="Renew the cards whose validity ends within N days (0: ends today).",
        )

    def handle(self, *args, within_days: int, **options):
        if within_days < 0:
            raise CommandError("--within-days must be 0 or more.")
        expired = self.run_batches(cards_expire)
        with ProgressBar(self.stderr) as bar:
            report = self.run_batches(
                cards_renew_expiring, within_days=within_days, on_progress=bar.update
            )
        summary = f"Expired {expired} card(s). Renewed {report.renewed} card(s); skipped "
        summary += f"{report.skipped_total}"
        if report.skipped:
            reasons = ", ".join(
                f"{count} {reason}" for reason, count in sorted(report.skipped.items())
            )
            summary += f": {reasons}"
        self.stdout.write(summary + ".")
