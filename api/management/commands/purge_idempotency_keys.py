from api.idempotency import idempotency_keys_purge
from core.management.base import TXCommand


class Command(TXCommand):
    help = (
        "Delete idempotency keys older than the 24-hour replay window; a purged key is new again."
    )

    def handle(self, *args, **options):
        deleted = self.run(idempotency_keys_purge).value
        self.stdout.write(f"Purged {deleted} idempotency key(s).")
