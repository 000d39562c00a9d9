import json

from institutions.management.base import InstitutionCommand
from payments.services.profiles import ach_profile_set

FIELDS = {
    "odfi_routing_number": str,
    "odfi_name": str,
    "destination_routing_number": str,
    "destination_name": str,
    "company_id": str,
    "company_name": str,
    "receiving_routing_number": str,
    "next_day_cutoff": str,
    "same_day_limit": int,
    "debit_hold_days": int,
    "approval_above": int,
}


class Command(InstitutionCommand):
    help = (
        "Set an institution's ACH profile: its sponsor bank (ODFI), where files go, the "
        "originator's company id and name, cut-offs in the institution's time zone and limits "
        "(docs/payments.md, 'The ACH profile'). A new profile needs the routing numbers, names "
        "and company id; after that, give only what changes. Prints the profile."
    )

    def add_arguments(self, parser):
        parser.add_argument("--institution", required=True, help="Institution id or name.")
        for field, kind in FIELDS.items():
            parser.add_argument(f"--{field.replace('_', '-')}", type=kind, dest=field)
        parser.add_argument(
            "--same-day-cutoff",
            action="append",
            dest="same_day_cutoffs",
            metavar="HH:MM",
            help="A same-day window (repeatable, in order; none: no same-day ACH).",
        )
        parser.add_argument(
            "--no-same-day", action="store_true", help="Remove the same-day windows."
        )
        parser.add_argument(
            "--require-verified",
            choices=["yes", "no"],
            help="Refuse orders to external accounts that are not verified.",
        )

    def handle(self, *args, **options):
        institution = self.institution(options["institution"])
        values = {field: options[field] for field in FIELDS if options[field] is not None}
        if options["same_day_cutoffs"] is not None:
            values["same_day_cutoffs"] = options["same_day_cutoffs"]
        if options["no_same_day"]:
            values["same_day_cutoffs"] = []
        if options["require_verified"] is not None:
            values["require_verified"] = options["require_verified"] == "yes"
        profile = self.run(ach_profile_set, institution=institution, **values).value
        shown = {field: getattr(profile, field) for field in (*FIELDS, "same_day_cutoffs")}
        shown["require_verified"] = profile.require_verified
        self.stdout.write(json.dumps({"institutionId": institution.pk, **shown}))
