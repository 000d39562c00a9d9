from core.management.base import TXCommand
from disputes.services.watch import disputes_watch_deadlines


class Command(TXCommand):
    help = (
        "Watch the dispute deadlines now, in each institution's calendar: a deadline not met "
        "that is 2 business days away or less gets dispute.deadline_approaching once, one "
        "missed gets dispute.deadline_missed once, a draft past its network filing deadline "
        "closes expired; a product crediting by_deadline credits on the deadline's day, and "
        "reversals whose notice has run are posted. Safe to run from several machines at "
        "once. The job watch_dispute_deadlines runs it hourly."
    )

    def handle(self, *args, **options):
        counts = self.run_batches(disputes_watch_deadlines)
        self.stdout.write(
            f"Dispute deadlines: {counts['approaching']} approaching, {counts['missed']} "
            f"missed; {counts['expired']} draft(s) expired, {counts['credited']} credited by "
            f"their deadline, {counts['reversed']} held reversal(s) posted."
        )
