from accounts.services import holds_expire
from authorizations.services import authorizations_expire
from core.management.base import TXCommand
from transfers.services import transfers_expire


class Command(TXCommand):
    help = (
        "Expire active holds whose expiresAt has passed (their amounts become available "
        "again; hold.expired events), card authorizations' holds included (their limit usage "
        "is given back; authorization.expired events). Safe to run from several machines at "
        "once. Pending two-phase transfers past their expiresAt expire too "
        "(transfer.expired events)."
    )

    def handle(self, *args, **options):
        expired = self.run_batches(holds_expire)
        authorizations = self.run_batches(authorizations_expire)
        transfers = self.run_batches(transfers_expire)
        self.stdout.write(
            f"Expired {expired} hold(s), {authorizations} card authorization(s) and "
            f"{transfers} pending transfer(s)."
        )
