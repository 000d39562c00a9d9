from institutions.management.base import InstitutionCommand
from institutions.scopes import ALL, ROLES
from institutions.services import api_key_create


class Command(InstitutionCommand):
    help = (
        "Create an API key for an institution. The key is printed once and never stored. "
        "Give its scopes with --role and/or --scope (at least one: no scope is granted by "
        "default)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--institution", required=True, help="Institution id or name.")
        parser.add_argument(
            "--allow",
            action="append",
            required=True,
            metavar="CIDR",
            help="Allowed client network, IPv4 or IPv6 (repeatable; at least one).",
        )
        parser.add_argument(
            "--role",
            choices=sorted(ROLES),
            help="Preset scopes: full (every scope but cards:sensitive and network), readonly "
            "(read), network (read, network: a card processor's connector).",
        )
        parser.add_argument(
            "--scope",
            action="append",
            default=[],
            metavar="SCOPE",
            help=f"One more scope (repeatable), e.g. cards:sensitive. Known: {', '.join(ALL)}.",
        )
        parser.add_argument("--name", default="", help="A label for operators.")
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print one line: {"institutionId", "keyId", "apiKey"}.',
        )

    def handle(self, *args, **options):
        institution = self.institution(options["institution"])
        issued = self.run(
            api_key_create,
            institution=institution,
            allow=options["allow"],
            role=options["role"],
            scopes=options["scope"],
            name=options["name"],
            created_by="manage.py create_api_key",
        ).value
        if options["json"]:
            self.stdout.write(issued.json_line())
            return
        self.stdout.write(f"Key {issued.api_key.id} for {institution.name} ({institution.id})")
        self.stdout.write(f"Allowed from: {', '.join(options['allow'])}")
        self.stdout.write(f"Scopes: {', '.join(issued.api_key.scopes)}")
        self.stdout.write("API key (shown once, store it now):")
        self.stdout.write(issued.secret)
