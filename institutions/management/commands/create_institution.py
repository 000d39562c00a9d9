import json

from core.management.base import TXCommand
from institutions.services import institution_create


class Command(TXCommand):
    help = (
        "Create a financial institution (idempotent by name) with the standard account and "
        "card products."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--currency", default="EUR", help="Default currency (ISO 4217).")
        parser.add_argument(
            "--time-zone",
            default="UTC",
            help="IANA time zone whose days and months card limits count in (default UTC).",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON line.")

    def handle(self, *args, name, currency, time_zone, json: bool = False, **options):
        institution, created = self.run(
            institution_create, name=name, currency=currency, time_zone=time_zone
        ).value
        if json:
            self.stdout.write(_json_line(institution, created))
        else:
            verb = "Created" if created else "Already exists:"
            self.stdout.write(f"{verb} institution {institution.id} ({institution.name})")


def _json_line(institution, created):
    return json.dumps(
        {"institutionId": institution.id, "name": institution.name, "created": created}
    )
