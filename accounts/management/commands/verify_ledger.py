import sys

from django.core.management.base import BaseCommand

from accounts.verification import CHECKS, ledger_breaches

SHOWN_ROWS = 20


class Command(BaseCommand):
    help = (
        "Check the ledger's invariants: balanced journals, stored balances equal to entries "
        "and holds, balances summing to zero per institution and currency, no customer "
        "account below zero. Exit status 1 and a report on any breach."
    )

    def handle(self, *args, **options):
        breaches = ledger_breaches()
        if not breaches:
            self.stdout.write(f"Ledger OK: {len(CHECKS)} checks passed.")
            return
        for breach in breaches:
            self.stdout.write(f"BREACH: {breach.check} ({len(breach.rows)}):")
            for row in breach.rows[:SHOWN_ROWS]:
                self.stdout.write(f"  {row}")
            if len(breach.rows) > SHOWN_ROWS:
                self.stdout.write(f"  ... and {len(breach.rows) - SHOWN_ROWS} more")
        self.stdout.flush()
        sys.exit(1)
