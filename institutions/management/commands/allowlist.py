from institutions.management.base import InstitutionCommand
from institutions.services import allowlist_add, allowlist_remove


class Command(InstitutionCommand):
    help = "Manage the IP allowlist of an API key: add, remove or list CIDR ranges."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        for action in ("add", "remove"):
            p = sub.add_parser(action)
            p.add_argument("key", help="Key id or public prefix.")
            p.add_argument("cidr", help="IPv4 or IPv6 address or CIDR range.")
        p = sub.add_parser("list")
        p.add_argument("key", help="Key id or public prefix.")

    def handle(self, *args, action, key, **options):
        api_key = self.api_key(key)
        if action == "add":
            network = self.run(allowlist_add, api_key=api_key, cidr=options["cidr"]).value
            self.stdout.write(f"Allowed {network.cidr} for {api_key.id}")
        elif action == "remove":
            self.run(allowlist_remove, api_key=api_key, cidr=options["cidr"])
            self.stdout.write(f"Removed {options['cidr']} from {api_key.id}")
        else:
            for cidr in api_key.allowed_networks.values_list("cidr", flat=True):
                self.stdout.write(cidr)
