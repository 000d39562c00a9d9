"""Mail to a staff user about their own account's second factor (docs/back-office.md, "Signing
in"): an enrolment token issued (or the token itself, when the command is asked to mail it), an
app enrolled, a reset, new recovery codes. Through Django's mail backend (`EMAIL_BACKEND`).

A notice is sent once the change commits (never for a change rolled back), and a failure to send
is logged on `tx.staff` without undoing the change: the `StaffEvent` is the record, the mail only
tells. A notice carries no secret. A user with no e-mail address is told nothing (the commands
say so)."""

import logging
import smtplib

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction as db_transaction
from django.utils import timezone

logger = logging.getLogger("tx.staff")

SUBJECT_PREFIX = "TX back office: "
NOT_YOU = (
    "If this was not you, or you did not expect it, tell your security team at once, by phone."
)


def staff_notify(*, user, subject: str, body: str) -> bool:
    """Mail `user` `subject` and `body` once the current transaction commits. False when they
    have no e-mail address (nothing is sent)."""
    if not user.email:
        return False
    address, username = user.email, user.get_username()
    db_transaction.on_commit(lambda: _send(address, username, subject, f"{body}\n\n{NOT_YOU}\n"))
    return True


def enrolment_token_send(*, user, token: str, expires_at) -> None:
    """Mail `user` their enrolment token, now (after the transaction that issued it committed).
    Raises `smtplib.SMTPException` or `OSError` when the mail server refuses or cannot be
    reached: the caller says so (the token was issued but not delivered)."""
    send_mail(
        SUBJECT_PREFIX + "your enrolment token",
        f"Your enrolment token for the TX back office, {user.get_username()}:\n\n"
        f"    {token}\n\n"
        f"It works once, until {timezone.localtime(expires_at):%Y-%m-%d %H:%M %Z}. Sign in with "
        "your password and this token in the Code field, then set up your authenticator app.\n\n"
        f"{NOT_YOU}\n",
        settings.DEFAULT_FROM_EMAIL,
        [user.email],
    )


def _send(address: str, username: str, subject: str, body: str) -> None:
    try:
        send_mail(SUBJECT_PREFIX + subject, body, settings.DEFAULT_FROM_EMAIL, [address])
    except (smtplib.SMTPException, OSError) as error:
        # The change is committed and recorded; only the notice is lost.
        logger.error(
            "staff mail not sent",
            extra={"username": username, "subject": subject, "error": type(error).__name__},
        )
