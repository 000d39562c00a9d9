from institutions.management.base import InstitutionCommand
from institutions.services import api_key_revoke


class Command(InstitutionCommand):
    help = "Revoke an API key at once (by key id or public prefix)."

    def add_arguments(self, parser):
        parser.add_argument("key", help="Key id (key_...) or its public prefix.")

    def handle(self, *args, key, **options):
        api_key = self.run(
            api_key_revoke, api_key=self.api_key(key), revoked_by="manage.py revoke_api_key"
        ).value
        self.stdout.write(f"Revoked {api_key.id} at {api_key.revoked_at.isoformat()}")
