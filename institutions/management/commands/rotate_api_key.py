import json

from institutions.management.base import InstitutionCommand
from institutions.services import api_key_rotate


class Command(InstitutionCommand):
    help = (
        "Issue a new key with the same scopes, allowlist and expiry; the old key keeps working "
        "for the grace period, then expires (--now: it is revoked at once)."
    )

    def add_arguments(self, parser):
        parser.add_argument("key", help="Key id (key_...) or its public prefix.")
        retire = parser.add_mutually_exclusive_group()
        retire.add_argument(
            "--grace-hours",
            type=int,
            default=None,
            help="Hours the old key keeps working (default: API_KEY_ROTATION_GRACE_HOURS, 24).",
        )
        retire.add_argument(
            "--now",
            action="store_true",
            help="Revoke the old key at once (a leaked or compromised key): no grace period.",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print one line: {"institutionId", "keyId", "apiKey", "keyExpiresAt", '
            '"oldKeyId", and "oldKeyExpiresAt" or, with --now, "oldKeyRevokedAt"}.',
        )

    def handle(self, *args, key, grace_hours, now, **options):
        old = self.api_key(key)
        issued = self.run(
            api_key_rotate,
            api_key=old,
            grace_hours=grace_hours,
            rotated_by="manage.py rotate_api_key",
            retire_now=now,
        ).value
        old = issued.replaces
        new_expires = issued.api_key.expires_at
        if options["json"]:
            result = {
                "institutionId": old.institution_id,
                "keyId": issued.api_key.id,
                "apiKey": issued.secret,
                "keyExpiresAt": new_expires.isoformat() if new_expires else None,
                "oldKeyId": old.id,
            }
            if now:
                result["oldKeyRevokedAt"] = old.revoked_at.isoformat()
            else:
                result["oldKeyExpiresAt"] = old.expires_at.isoformat()
            self.stdout.write(json.dumps(result))
            return
        retired = (
            f"{old.id} revoked at {old.revoked_at.isoformat()}"
            if now
            else f"{old.id} expires at {old.expires_at.isoformat()}"
        )
        lasts = f"expires at {new_expires.isoformat()}" if new_expires else "does not expire"
        self.stdout.write(f"New key {issued.api_key.id} ({lasts}); {retired}")
        self.stdout.write("API key (shown once, store it now):")
        self.stdout.write(issued.secret)
