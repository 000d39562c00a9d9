import json

from api.management.base import TXCommand
from api.services import api_key_rotate


class Command(TXCommand):
    help = (
        "Issue a new key with the same scopes and allowlist; the old key keeps working for "
        "the grace period, then expires."
    )

    def add_arguments(self, parser):
        parser.add_argument("key", help="Key id (key_...) or its public prefix.")
        parser.add_argument(
            "--grace-hours",
            type=int,
            default=None,
            help="Hours the old key keeps working (default: API_KEY_ROTATION_GRACE_HOURS, 24).",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, key, grace_hours, **options):
        old = self.api_key(key)
        issued = api_key_rotate(
            api_key=old, grace_hours=grace_hours, rotated_by="manage.py rotate_api_key"
        )
        old.refresh_from_db()
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "institutionId": old.institution_id,
                        "keyId": issued.api_key.id,
                        "apiKey": issued.secret,
                        "oldKeyId": old.id,
                        "oldKeyExpiresAt": old.expires_at.isoformat(),
                    }
                )
            )
            return
        self.stdout.write(
            f"New key {issued.api_key.id}; {old.id} expires at {old.expires_at.isoformat()}"
        )
        self.stdout.write("API key (shown once, store it now):")
        self.stdout.write(issued.secret)
