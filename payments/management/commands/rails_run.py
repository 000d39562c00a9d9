import json
from dataclasses import asdict

from core.management.base import TXCommand
from payments.services.rails import rails_run


class Command(TXCommand):
    help = (
        "What the payments job does every minute: the cut-offs that have passed write their "
        "files (once each), the files are delivered to the outbox, due orders settle, the inbox "
        "is read (docs/payments.md, 'Jobs'). Safe to run twice or from two machines at once."
    )

    def handle(self, *args, **options):
        result = self.run_batches(rails_run)
        self.stdout.write(json.dumps(asdict(result)))
