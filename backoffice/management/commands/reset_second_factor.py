from backoffice.management.base import StaffCommand
from backoffice.second_factor import second_factor_reset


class Command(StaffCommand):
    help = (
        "Reset a staff user's second factor (a lost or stolen phone): their authenticator app "
        "and recovery codes are deleted, their sessions lose their verification, and a new "
        "one-time enrolment token is issued (printed once, or mailed with --mail-token), with "
        "which their next sign-in enrols a new app. Also issues a new token to a user who has "
        "not enrolled yet (the old one is voided). --by is an enrolled superuser. Recorded as "
        "staff events and in the user's admin history; the user is told by mail."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="The staff user whose second factor is reset.")
        parser.add_argument(
            "--by",
            required=True,
            help="The superuser asking for it, enrolled themselves (named in the history).",
        )
        parser.add_argument(
            "--reason", required=True, help="Why, e.g. the ticket that verified who asked."
        )
        self.add_delivery_argument(parser)

    def handle(self, *args, username, by, reason, **options):
        delivery = self.delivery(options)
        reset = self.run(
            second_factor_reset,
            user=self.user(username),
            by=self.user(by),
            reason=reason,
            delivery=delivery,
        ).value
        self.stdout.write(f"Second factor of {username} reset ({reset.deleted} devices deleted).")
        self.hand_over(reset.issued, delivery)
