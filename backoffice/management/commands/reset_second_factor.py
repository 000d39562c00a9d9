from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from backoffice.second_factor import second_factor_reset
from core.management.base import TXCommand


class Command(TXCommand):
    help = (
        "Reset a staff user's second factor (a lost or stolen phone): their authenticator app "
        "and recovery codes are deleted, their sessions lose their verification, and their "
        "next sign-in enrols a new app. Recorded in the user's admin history."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="The staff user whose second factor is reset.")
        parser.add_argument(
            "--by", required=True, help="The superuser asking for it (named in the history)."
        )
        parser.add_argument(
            "--reason", required=True, help="Why, e.g. the ticket that verified who asked."
        )

    def handle(self, *args, username, by, reason, **options):
        deleted = self.run(
            second_factor_reset, user=self.user(username), by=self.user(by), reason=reason
        ).value
        self.stdout.write(
            f"Second factor of {username} reset ({deleted} devices deleted): they enrol a new "
            "authenticator app at their next sign-in."
        )

    @staticmethod
    def user(username: str):
        user_model = get_user_model()
        try:
            return user_model._default_manager.get(**{user_model.USERNAME_FIELD: username})
        except user_model.DoesNotExist:
            raise CommandError(f"No user {username!r}.") from None
