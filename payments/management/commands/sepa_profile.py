import json

from institutions.management.base import InstitutionCommand
from payments.models import SepaProfile
from payments.services.profiles import sepa_profile_set

FIELDS = {
    "bic": str,
    "settlement_iban": str,
    "creditor_identifier": str,
    "credit_transfer_cutoff": str,
    "direct_debit_cutoff": str,
    "approval_above": int,
    "pre_notification_days": int,
    "debit_hold_days": int,
    "iban_country": str,
    "iban_bank_code": str,
}


class Command(InstitutionCommand):
    help = (
        "Set an institution's SEPA profile: initiation (a customer of a partner bank: its BIC "
        "and the institution's IBAN there) or interbank (a participant of the clearing: its own "
        "BIC, and its accounts' IBANs for its credit transfers), its creditor identifier for "
        "direct debits, cut-offs in the institution's time zone and limits, and the country and "
        "bank code its accounts' IBANs are issued under (once; docs/payments.md, 'The SEPA "
        "profile' and 'Inbound SEPA'). A new profile needs its kind and BIC; after that, give "
        "only what changes. Prints the profile (its IBAN by its last four)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--institution", required=True, help="Institution id or name.")
        parser.add_argument("--kind", choices=SepaProfile.Kind.values)
        for field, kind in FIELDS.items():
            parser.add_argument(f"--{field.replace('_', '-')}", type=kind, dest=field)
        parser.add_argument(
            "--require-verified",
            choices=["yes", "no"],
            help="Refuse orders to external accounts that are not verified.",
        )

    def handle(self, *args, **options):
        institution = self.institution(options["institution"])
        values = {
            field: options[field] for field in ("kind", *FIELDS) if options[field] is not None
        }
        if options["require_verified"] is not None:
            values["require_verified"] = options["require_verified"] == "yes"
        profile = self.run(sepa_profile_set, institution=institution, **values).value
        shown = {field: getattr(profile, field) for field in ("kind", *FIELDS)}
        shown["settlement_iban"] = (
            f"••••{profile.settlement_iban[-4:]}" if profile.settlement_iban else ""
        )
        shown["require_verified"] = profile.require_verified
        self.stdout.write(json.dumps({"institutionId": institution.pk, **shown}))
