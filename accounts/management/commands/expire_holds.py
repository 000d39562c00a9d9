from django.core.management.base import BaseCommand

from accounts.services import holds_expire


class Command(BaseCommand):
    help = (
        "Expire active holds whose expiresAt has passed (their amounts become available "
        "again; hold.expired events). Safe to run from several machines at once."
    )

    def handle(self, *args, **options):
        expired = holds_expire()
        self.stdout.write(f"Expired {expired} hold(s).")
