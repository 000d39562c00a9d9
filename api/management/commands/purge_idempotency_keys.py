from api.management.base import TXCommand
from api.services import idempotency_keys_purge


class Command(TXCommand):
    help = (
        "Delete idempotency keys older than the 24-hour replay window; a purged key is new again."
    )

    def handle(self, *args, **options):
        deleted = idempotency_keys_purge()
        self.stdout.write(f"Purged {deleted} idempotency key(s).")
