"""The staff's second factor (PCI DSS 8.4.2), on django-otp's device framework with devices of
our own (`backoffice.models`): an authenticator app (TOTP, its key encrypted at rest) and ten
single-use recovery codes (salted keyed hashes), docs/back-office.md "Signing in".

- **Sign-in** asks for the password and a code: six digits are the app's code, anything else a
  recovery code. The code is checked against that one device (each device is throttled after
  wrong codes; a wrong code also counts towards the lockout, `backoffice.forms`).
- **Enrolment needs the password and a one-time enrolment token** handed over out of band
  (`enrolment_token_issue`, from `create_staff_user` and `reset_second_factor`): the token is the
  code of a user who has no app yet. Its session then reaches one page, enrolment, which makes
  a new key for that session (`enrolment_device`: the device's id is kept in the session, and
  any other unconfirmed device of the user is deleted) and confirms it with the app's first
  code (`enrolment_confirm`), which uses the token up. A device made for another session is not
  in this session, so it cannot be confirmed here; of two sessions holding one token, the one
  that confirms first wins, and the token is then used. A user without an app has no verified
  session, so no staff or superuser power at all.
- **A lost device**: `manage.py reset_second_factor` (`second_factor_reset`, by an enrolled
  superuser) deletes the user's devices and issues a new enrolment token.
- **Recovery codes** are renewed with a current code of the app (`recovery_codes_renew`).

Each change writes a `StaffEvent` (`staff_event_record`), leaves a `LogEntry` on the staff user
where it has a staff actor (their admin history), and tells the user by mail after the commit
(`backoffice.staff_mail`). No token, key or code is ever logged, stored in clear or put in an
error message.

Lock order: the enrolment token's row, then the devices (`backoffice.locks`).
"""

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.admin.models import CHANGE, LogEntry
from django.db import transaction as db_transaction
from django.utils import timezone

from backoffice import secrets
from backoffice.locks import lock_enrolment_token, lock_first_device, lock_pending_app_device
from backoffice.models import (
    AppDevice,
    EnrolmentToken,
    RecoveryCode,
    RecoveryCodeDevice,
    StaffEvent,
)
from backoffice.staff_events import staff_event_record
from backoffice.staff_mail import staff_notify
from core.exceptions import ValidationFailed

RECOVERY_CODES = 10
_APP_CODE = re.compile(r"\A[0-9]{6}\Z")
# django-otp's throttling refuses to check a device's codes for 2^(n-1) seconds after its n-th
# wrong one.
THROTTLED = "Too many wrong codes: wait a few seconds, then enter the next code."
# How a token goes to its user: printed once by the command, or mailed to their address.
PRINTED, MAILED = "printed", "mail"


class EnrolmentClosed(ValidationFailed):
    """The session's enrolment token is used (by this or another session), voided by a newer
    one, or expired: this session can enrol nothing more."""

    message = "This enrolment is closed: the token is used, replaced or expired."


class EnrolmentKeyReplaced(ValidationFailed):
    """The device this session showed was replaced by an enrolment begun in another session."""

    message = (
        "An enrolment begun in another sign-in replaced the key this page showed. Scan the new "
        "key below."
    )


@dataclass(frozen=True)
class IssuedToken:
    """An enrolment token as issued: `token` is shown once (or mailed) and stored only hashed."""

    token: str = field(repr=False)  # never in a log line or a traceback's locals
    expires_at: datetime
    user: object


def has_second_factor(user) -> bool:
    """The user enrolled: a confirmed authenticator app."""
    return AppDevice.objects.filter(user=user, confirmed=True).exists()


def device_for_code(user, code: str):
    """The confirmed device of `user` that accepts `code`, or None (a wrong code). A recovery
    code is used up by this. `ValidationFailed` while the device is throttled (nothing was
    checked)."""
    code = "".join(code.split()).lower()
    model = AppDevice if _APP_CODE.match(code) else RecoveryCodeDevice
    with db_transaction.atomic():
        device = lock_first_device(model.objects.devices_for_user(user, confirmed=True))
        if device is None:
            return None
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            raise ValidationFailed(THROTTLED)
        return device if device.verify_token(code) else None


# --- Enrolment tokens --------------------------------------------------------------------------
def enrolment_token_issue(*, user, by=None, via: str, delivery: str = PRINTED) -> IssuedToken:
    """A new one-time enrolment token for `user` (an active staff user without an app): random,
    valid for `STAFF_ENROLMENT_TOKEN_HOURS` (24 at most), stored as its hash; the user's open
    tokens are voided. `by` is the superuser who asked (a reset) or None (an operator's
    `create_staff_user`); `via` names the command. `delivery` says how the token reaches the
    user: `printed` (the caller shows it once; the user is told by mail that one was issued) or
    `mail` (the caller mails it after the commit: `staff_mail.enrolment_token_send`).

    Writes a `StaffEvent`. Raises `ValidationFailed` for a user who is not active staff, who
    has an app already (a reset first), or, to be mailed, who has no e-mail address."""
    if not (user.is_active and user.is_staff):
        raise ValidationFailed(f"{user.get_username()} is not an active staff user.")
    if delivery not in (PRINTED, MAILED):
        raise ValidationFailed(f"Deliver the token {PRINTED!r} or by {MAILED!r}.")
    if delivery == MAILED and not user.email:
        raise ValidationFailed(
            f"{user.get_username()} has no e-mail address: print the token instead."
        )
    with db_transaction.atomic():
        if has_second_factor(user):
            raise ValidationFailed(
                f"{user.get_username()} has an authenticator app: reset it first "
                "(manage.py reset_second_factor)."
            )
        now = timezone.now()
        EnrolmentToken.objects.filter(user=user, used_at=None, voided_at=None).update(voided_at=now)
        token = secrets.enrolment_token_new()
        row = EnrolmentToken.objects.create(
            user=user,
            digest=secrets.enrolment_token_digest(token),
            issued_by=by,
            created_at=now,
            expires_at=now + timedelta(hours=settings.STAFF_ENROLMENT_TOKEN_HOURS),
        )
        staff_event_record(
            type=StaffEvent.Type.ENROLMENT_TOKEN_ISSUED,
            user=user,
            by=by,
            data={
                "tokenId": row.pk,
                "expiresAt": row.expires_at.isoformat(),
                "via": via,
                "delivery": delivery,
            },
        )
        if delivery == PRINTED:
            staff_notify(
                user=user,
                subject="an enrolment token was issued",
                body=f"An enrolment token was issued for your account {user.get_username()} "
                f"({via}{_by(by)}), valid until {_when(row.expires_at)}. It is handed to you "
                "in person or by phone; with your password it lets you set up your "
                "authenticator app.",
            )
    return IssuedToken(token=token, expires_at=row.expires_at, user=user)


def enrolment_token_check(*, user, token: str) -> EnrolmentToken | None:
    """The open, unexpired enrolment token of `user` that `token` (as typed) is, or None."""
    if not token:
        return None
    row = (
        EnrolmentToken.objects.filter(
            user=user, used_at=None, voided_at=None, expires_at__gt=timezone.now()
        )
        .order_by("-pk")
        .first()
    )
    return row if row is not None and row.matches(token) else None


# --- Enrolment ---------------------------------------------------------------------------------
def enrolment_device(*, user, token_id, device_id) -> tuple[AppDevice, bool]:
    """The authenticator app this session enrols: `device_id` (kept in the session) while it
    still waits for its first code, or else a new one with a new key, which deletes the user's
    other unconfirmed devices (a key shown to another session never works). Returns (device,
    made now). Raises `EnrolmentClosed` when the session's token (`token_id`) is no longer open,
    and `ValidationFailed` when the user has an app already."""
    with db_transaction.atomic():
        _open_token(user, token_id)
        device = lock_pending_app_device(device_id, user)
        if device is not None:
            return device, False
        AppDevice.objects.filter(user=user, confirmed=False).delete()
        return AppDevice.create(user=user, confirmed=False), True


@dataclass(frozen=True)
class Enrolled:
    device: AppDevice  # confirmed: the session it verifies is marked with it
    codes: list[str]  # the recovery codes, to be shown once


def enrolment_confirm(*, user, token_id, device_id, code: str) -> Enrolled | None:
    """Confirm this session's app (`device_id`) with its first code: the enrolment token
    (`token_id`) is used up in the same transaction, the recovery codes are issued (returned
    once, to be shown once), a `StaffEvent` and a `LogEntry` are written and the user is told
    by mail. None when the code is wrong (the device's throttle counts it).

    Raises `EnrolmentClosed` when the token is no longer open (another session enrolled with it
    first, a newer token voided it, or it expired), `EnrolmentKeyReplaced` when another session
    replaced this session's device, and `ValidationFailed` while the device is throttled or when
    the user has an app already."""
    with db_transaction.atomic():
        token = _open_token(user, token_id)
        device = lock_pending_app_device(device_id, user)
        if device is None:
            raise EnrolmentKeyReplaced
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            raise ValidationFailed(THROTTLED)
        if not device.verify_token("".join(code.split())):
            return None
        token.used_at = timezone.now()
        token.save(update_fields=["used_at"])
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _recovery_codes_issue(user)
        staff_event_record(
            type=StaffEvent.Type.SECOND_FACTOR_ENROLLED,
            user=user,
            by=user,
            data={"deviceId": device.pk, "tokenId": token.pk, "recoveryCodes": len(codes)},
        )
        _log(
            by=user,
            user=user,
            message=f"Second factor enrolled: an authenticator app and {len(codes)} recovery "
            "codes.",
        )
        staff_notify(
            user=user,
            subject="an authenticator app was set up",
            body=f"An authenticator app was set up as the second factor of your account "
            f"{user.get_username()} on {_when(token.used_at)}, and {len(codes)} recovery codes "
            "were shown.",
        )
    return Enrolled(device=device, codes=codes)


def _open_token(user, token_id) -> EnrolmentToken:
    token = lock_enrolment_token(token_id, user)
    if token is None or not token.is_live():
        raise EnrolmentClosed
    if has_second_factor(user):
        raise ValidationFailed("A second factor is already enrolled.")
    return token


# --- Recovery codes ----------------------------------------------------------------------------
def recovery_codes_renew(*, user, code: str) -> list[str] | None:
    """New recovery codes for an enrolled user, asked with a current code of their app (a
    session left open is not enough to mint a lasting factor); the old codes stop working.
    Returned once. None when the code is wrong (the app's throttle counts it). Raises
    `ValidationFailed` when the user has no app, or while it is throttled."""
    with db_transaction.atomic():
        device = lock_first_device(AppDevice.objects.devices_for_user(user, confirmed=True))
        if device is None:
            raise ValidationFailed("No second factor is enrolled.")
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            raise ValidationFailed(THROTTLED)
        if not device.verify_token("".join(code.split())):
            return None
        codes = _recovery_codes_issue(user)
        staff_event_record(
            type=StaffEvent.Type.RECOVERY_CODES_RENEWED,
            user=user,
            by=user,
            data={"recoveryCodes": len(codes)},
        )
        _log(by=user, user=user, message=f"Recovery codes renewed: {len(codes)} new codes.")
        staff_notify(
            user=user,
            subject="new recovery codes",
            body=f"New recovery codes were made for your account {user.get_username()} on "
            f"{_when(timezone.now())}; the previous ones no longer work.",
        )
    return codes


# --- A lost device -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Reset:
    deleted: int  # devices deleted (the app, the recovery codes)
    issued: IssuedToken


def second_factor_reset(*, user, by, reason: str, delivery: str = PRINTED) -> Reset:
    """Delete every device of `user` (a lost or stolen phone): their sessions lose their
    verification at once. Then a new enrolment token is issued (`enrolment_token_issue`,
    `delivery` as there), with which they enrol again. `by` is an active superuser who is
    enrolled themselves (a superuser flag without a second factor is no power), never `user`.

    Writes a `StaffEvent` (with the reason) and a `LogEntry`, and tells the user by mail.
    Raises `ValidationFailed` for a blank reason or a `by` who may not."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed("Give the reason for the reset.")
    if not (by.is_active and by.is_superuser):
        raise ValidationFailed(f"{by.get_username()} is not an active superuser.")
    if by.pk == user.pk:
        raise ValidationFailed("A second factor is reset by someone else, not its owner.")
    if not has_second_factor(by):
        raise ValidationFailed(
            f"{by.get_username()} has not enrolled a second factor: a superuser without one "
            "cannot reset anyone's."
        )
    with db_transaction.atomic():
        deleted = 0
        for model in (AppDevice, RecoveryCodeDevice):
            deleted += model.objects.filter(user=user).delete()[1].get(model._meta.label, 0)
        staff_event_record(
            type=StaffEvent.Type.SECOND_FACTOR_RESET,
            user=user,
            by=by,
            data={"reason": reason, "devices": deleted},
        )
        _log(by=by, user=user, message=f"Second factor reset ({deleted} devices): {reason}")
        staff_notify(
            user=user,
            subject="your second factor was reset",
            body=f"The second factor of your account {user.get_username()} was reset by "
            f"{by.get_username()} on {_when(timezone.now())}: your authenticator app and "
            f"recovery codes no longer work. Reason given: {reason}",
        )
        issued = enrolment_token_issue(
            user=user, by=by, via="reset_second_factor", delivery=delivery
        )
    return Reset(deleted=deleted, issued=issued)


def _recovery_codes_issue(user) -> list[str]:
    """Ten new codes on the user's recovery-code device (made if they have none; kept otherwise,
    so a session it verified stays verified), the old ones deleted. Stored hashed only."""
    device, made = RecoveryCodeDevice.objects.get_or_create(
        user=user, defaults={"name": "Recovery codes", "confirmed": True}
    )
    if not made:
        device.codes.all().delete()
        device.throttle_reset()
    codes = [secrets.recovery_code_new() for _ in range(RECOVERY_CODES)]
    RecoveryCode.objects.bulk_create(RecoveryCode.of(device=device, code=code) for code in codes)
    return codes


def _log(*, by, user, message: str) -> None:
    LogEntry.objects.log_actions(
        user_id=by.pk, queryset=[user], action_flag=CHANGE, change_message=message
    )


def _by(by) -> str:
    return f", by {by.get_username()}" if by is not None else ""


def _when(at) -> str:
    return f"{timezone.localtime(at):%Y-%m-%d %H:%M %Z}"
