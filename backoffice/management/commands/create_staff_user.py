import getpass
import os
import sys

from django.core.management.base import CommandError

from backoffice.management.base import StaffCommand
from backoffice.staff_accounts import ROLES, staff_user_create
from institutions.services import institution_get


class Command(StaffCommand):
    stealth_options = ("stdin",)
    help = (
        "Make a back-office login: a staff user with role groups and the institutions they "
        "work on (or every institution), or a superuser, and a one-time enrolment token "
        "(printed once, or mailed with --mail-token) without which the account can do nothing: "
        "the user signs in with their password and the token, then sets up their authenticator "
        "app. The password is never an argument: it is asked for (twice), or read from the "
        "first line of standard input (--password-stdin) or from an environment variable "
        "(--password-env NAME), and checked by Django's password validators."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--email", default="", help="Their address: mails about their second factor."
        )
        parser.add_argument(
            "--superuser",
            action="store_true",
            help="Every permission on every institution (no --role, no --institution).",
        )
        parser.add_argument(
            "--role",
            action="append",
            default=[],
            choices=ROLES,
            dest="roles",
            help="A role group (docs/back-office.md, 'Roles'); repeat for several.",
        )
        parser.add_argument(
            "--institution",
            action="append",
            default=[],
            dest="institutions",
            help="An institution they work on, by id or exact name; repeat for several.",
        )
        parser.add_argument(
            "--all-institutions",
            action="store_true",
            help="They work on every institution (the permission work_on_all_institutions).",
        )
        password = parser.add_mutually_exclusive_group()
        password.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from the first line of standard input.",
        )
        password.add_argument(
            "--password-env",
            metavar="NAME",
            help="Read the password from the environment variable NAME.",
        )
        self.add_delivery_argument(parser)

    def handle(self, *args, username, **options):
        password = self.password(options)
        delivery = self.delivery(options)
        created = self.run(
            staff_user_create,
            username=username,
            password=password,
            email=options["email"],
            superuser=options["superuser"],
            roles=options["roles"],
            institutions=[
                institution_get(reference=reference) for reference in options["institutions"]
            ],
            all_institutions=options["all_institutions"],
            delivery=delivery,
        ).value
        user = created.user
        if user.is_superuser:
            what = "a superuser"
        else:
            where = (
                "every institution"
                if options["all_institutions"]
                else ", ".join(sorted(options["institutions"])) or "no institution yet"
            )
            what = f"roles {', '.join(options['roles'])}; works on {where}"
        self.stdout.write(f"Staff user {username} made ({what}).")
        self.hand_over(created.issued, delivery)

    def password(self, options) -> str:
        if options["password_stdin"]:
            password = self.stdin.readline().rstrip("\r\n")
        elif options["password_env"]:
            password = os.environ.get(options["password_env"], "")
            if not password:
                raise CommandError(f"The environment variable {options['password_env']} is empty.")
        elif self.stdin.isatty():
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The two passwords differ.")
        else:
            raise CommandError(
                "No password: run in a terminal to be asked, or use --password-stdin or "
                "--password-env NAME (never an argument: it would show in the process list)."
            )
        if not password:
            raise CommandError("The password is empty.")
        return password

    def execute(self, *args, **options):
        # As Django's createsuperuser: call_command(..., stdin=...) gives a standard input.
        self.stdin = options.get("stdin", sys.stdin)
        return super().execute(*args, **options)
