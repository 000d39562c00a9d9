from accounts.services import holds_expire
from authorizations.services import authorizations_expire
from core.management.base import TXCommand


class Command(TXCommand):
    help = (
        "Expire active holds whose expiresAt has passed (their amounts become available "
        "again; hold.expired events), card authorizations' holds included (their limit usage "
        "is given back; authorization.expired events). Safe to run from several machines at "
        "once."
    )

    def handle(self, *args, **options):
        expired = self.run_batches(holds_expire)
        authorizations = self.run_batches(authorizations_expire)
        self.stdout.write(f"Expired {expired} hold(s) and {authorizations} card authorization(s).")
