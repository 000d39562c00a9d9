from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError

from api.management.base import TXCommand
from api.management.progress import ProgressBar
from api.reencryption import sensitive_data_reencrypt


class Command(TXCommand):
    help = (
        "Re-encrypt under the newest key of FIELD_ENCRYPTION_KEYS every card PAN and CVV, "
        "customer national id and webhook signing secret stored under an older key (run after "
        "putting a new key first). Idempotent; safe to run from several machines at once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Only count what would be re-encrypted."
        )

    def handle(self, *args, dry_run: bool, **options):
        try:
            if dry_run:
                report = sensitive_data_reencrypt(dry_run=True)
            else:
                with ProgressBar(self.stderr) as bar:
                    report = sensitive_data_reencrypt(on_progress=bar.update)
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from None
        if dry_run:
            self.stdout.write(
                f"Would re-encrypt under key '{report.key_id}': {report.cards} card(s) "
                f"(PAN and CVV), {report.customers} customer national id(s) and "
                f"{report.webhook_endpoints} webhook signing secret(s)."
            )
            return
        self.stdout.write(
            f"Re-encrypted under key '{report.key_id}': {report.cards} card(s) (PAN and CVV), "
            f"{report.customers} customer national id(s) and {report.webhook_endpoints} webhook "
            "signing secret(s)."
        )
        if report.remaining:
            self.stdout.write(
                f"{report.remaining} row(s) were in use and are still under an older key: "
                "run the command again."
            )
