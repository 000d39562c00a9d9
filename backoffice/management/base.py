"""The base of the commands about staff accounts (`create_staff_user`, `reset_second_factor`):
`TXCommand` with the lookup of a user by username and the handover of an enrolment token,
printed once or mailed once the token is committed (docs/back-office.md, "Signing in")."""

import smtplib

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils import timezone

from backoffice.second_factor import MAILED, PRINTED, IssuedToken
from backoffice.staff_mail import enrolment_token_send
from core.management.base import TXCommand


class StaffCommand(TXCommand):
    def add_delivery_argument(self, parser) -> None:
        parser.add_argument(
            "--mail-token",
            action="store_true",
            help="Mail the enrolment token to the user's address instead of printing it "
            "(never to an address the password went to).",
        )

    @staticmethod
    def delivery(options) -> str:
        return MAILED if options["mail_token"] else PRINTED

    @staticmethod
    def user(username: str):
        user_model = get_user_model()
        try:
            return user_model._default_manager.get(**{user_model.USERNAME_FIELD: username})
        except user_model.DoesNotExist:
            raise CommandError(f"No user {username!r}.") from None

    def hand_over(self, issued: IssuedToken, delivery: str) -> None:
        """Print the token once, or mail it (the transaction that issued it has committed),
        and say whether the user is told by mail."""
        user = issued.user
        username = user.get_username()
        until = f"{timezone.localtime(issued.expires_at):%Y-%m-%d %H:%M %Z}"
        if delivery == MAILED:
            try:
                enrolment_token_send(user=user, token=issued.token, expires_at=issued.expires_at)
            except (smtplib.SMTPException, OSError) as error:
                raise CommandError(
                    f"The enrolment token of {username} was issued but not mailed "
                    f"({type(error).__name__}): run reset_second_factor again to issue another "
                    "(it voids this one), or hand one over in person."
                ) from None
            self.stdout.write(
                f"Enrolment token mailed to {user.email} (valid until {until}). {username} signs "
                "in with their password and this token, then sets up their authenticator app."
            )
            return
        self.stdout.write(
            f"Enrolment token of {username} (shown once, valid until {until}, works once):\n\n"
            f"    {issued.token}\n\n"
            f"Hand it to {username} in person or by phone, not by the channel that carried the "
            "password. They sign in with their password and this token, then set up their "
            "authenticator app."
        )
        if not user.email:
            self.stdout.write(f"{username} has no e-mail address: they are not told by mail.")
