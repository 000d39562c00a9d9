from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError

from core.management.base import TXCommand
from core.management.progress import ProgressBar
from core.reencryption import sensitive_data_reencrypt


class Command(TXCommand):
    help = (
        "Re-encrypt under the newest key of FIELD_ENCRYPTION_KEYS every value encrypted at rest "
        "(card PANs and CVVs, customer national ids, webhook and decisioning signing secrets, "
        "stored idempotent responses, staff authenticator-app keys) "
        "stored under an "
        "older key (run after putting a new key first). Idempotent; safe to run from several "
        "machines at once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Only count what would be re-encrypted."
        )

    def handle(self, *args, dry_run: bool, **options):
        try:
            if dry_run:
                report = self.run_batches(sensitive_data_reencrypt, dry_run=True)
            else:
                with ProgressBar(self.stderr) as bar:
                    report = self.run_batches(sensitive_data_reencrypt, on_progress=bar.update)
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from None
        if dry_run:
            self.stdout.write(f"Would re-encrypt under key '{report.key_id}': {report.summary()}.")
            return
        self.stdout.write(f"Re-encrypted under key '{report.key_id}': {report.summary()}.")
        if report.remaining:
            self.stdout.write(
                f"{report.remaining} row(s) were in use and are still under an older key: "
                "run the command again."
            )
