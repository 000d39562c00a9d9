from authorizations.services import authorizations_resolve_stranded, increments_resolve_stranded
from core.management.base import TXCommand


class Command(TXCommand):
    help = (
        "Decide card authorizations and their increments left awaiting their program's "
        "decision (their request's process stopped between the hold and the decision) by "
        "their decisioning endpoint's onFailure: approved (stand-in) or declined "
        "program_unavailable, with their events. "
        "Only those older than the longest call and a margin (5 seconds). Safe to run from "
        "several machines at once. The job resolve_stranded_authorizations runs it every 5 "
        "seconds."
    )

    def handle(self, *args, **options):
        resolved = self.run_batches(authorizations_resolve_stranded)
        increments = self.run_batches(increments_resolve_stranded)
        self.stdout.write(
            f"Decided {resolved} stranded card authorization(s) and {increments} increment(s)."
        )
