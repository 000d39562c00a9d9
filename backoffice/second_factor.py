"""The staff's second factor (PCI DSS 8.4.2), on django-otp: an authenticator app (a TOTP
device) and ten single-use recovery codes (a static device), docs/back-office.md.

- Sign-in asks for the password and a code: six digits are the app's code, anything else a
  recovery code. The code is checked against that one device (django-otp throttles each device
  after wrong codes; a wrong code also counts towards the lockout, `backoffice.forms`).
- A staff user with no confirmed device is signed in by the password alone into a session that
  reaches one page: enrolment (`enrolment_device`, `enrolment_confirm`), which shows a QR code,
  checks a first code and shows the recovery codes once.
- A lost device: `manage.py reset_second_factor` (`second_factor_reset`) deletes the user's
  devices; the next sign-in enrols again.

Each change leaves a `LogEntry` on the staff user (who, when, what), as the admin's actions do.
"""

import re

from django.contrib.admin.models import CHANGE, LogEntry
from django.db import transaction as db_transaction
from django_otp import user_has_device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from backoffice.locks import lock_first_device, lock_totp_device
from core.exceptions import ValidationFailed

RECOVERY_CODES = 10
_APP_CODE = re.compile(r"\A[0-9]{6}\Z")
# django-otp refuses to check a device's codes for 2^(n-1) seconds after its n-th wrong one.
THROTTLED = "Too many wrong codes: wait a few seconds, then enter the next code."


def has_second_factor(user) -> bool:
    """The user enrolled: a confirmed device of either kind."""
    return user_has_device(user, confirmed=True)


def device_for_code(user, code: str):
    """The confirmed device of `user` that accepts `code`, or None (a wrong code). A recovery
    code is used up by this. `ValidationFailed` while the device is throttled (nothing was
    checked)."""
    code = "".join(code.split()).lower()
    model = TOTPDevice if _APP_CODE.match(code) else StaticDevice
    with db_transaction.atomic():
        device = lock_first_device(model.objects.devices_for_user(user, confirmed=True))
        if device is None:
            return None
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            raise ValidationFailed(THROTTLED)
        return device if device.verify_token(code) else None


def enrolment_device(user) -> TOTPDevice:
    """The unconfirmed authenticator-app device enrolment shows: the same one on every visit,
    so a page reloaded after scanning still matches the app."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=False)
    return device


def enrolment_confirm(*, user, device: TOTPDevice, code: str) -> list[str] | None:
    """Confirm `device` with its first code and issue the recovery codes (returned once, to be
    shown once). None when the code is wrong. Refused when the user has enrolled meanwhile, or
    while the device is throttled after wrong codes."""
    with db_transaction.atomic():
        device = lock_totp_device(device.pk, user)
        if has_second_factor(user):
            raise ValidationFailed("A second factor is already enrolled.")
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            raise ValidationFailed(THROTTLED)
        if not device.verify_token("".join(code.split())):
            return None
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        TOTPDevice.objects.filter(user=user, confirmed=False).delete()
        codes = _recovery_codes_issue(user)
        _log(
            by=user,
            user=user,
            message=f"Second factor enrolled: an authenticator app and {len(codes)} recovery "
            "codes.",
        )
    return codes


def recovery_codes_renew(*, user) -> list[str]:
    """New recovery codes for an enrolled user; the old ones stop working. Returned once."""
    with db_transaction.atomic():
        if not has_second_factor(user):
            raise ValidationFailed("No second factor is enrolled.")
        codes = _recovery_codes_issue(user)
        _log(by=user, user=user, message=f"Recovery codes renewed: {len(codes)} new codes.")
    return codes


def second_factor_reset(*, user, by, reason: str) -> int:
    """Delete every device of `user` (a lost or stolen phone): their sessions lose their
    verification at once and the next sign-in enrols again. `by` is the superuser who asked,
    never `user` themselves. Returns how many devices were deleted."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed("Give the reason for the reset.")
    if not (by.is_active and by.is_superuser):
        raise ValidationFailed(f"{by.get_username()} is not an active superuser.")
    if by.pk == user.pk:
        raise ValidationFailed("A second factor is reset by someone else, not its owner.")
    with db_transaction.atomic():
        deleted = 0
        for model in (TOTPDevice, StaticDevice):
            deleted += model.objects.filter(user=user).delete()[1].get(model._meta.label, 0)
        _log(by=by, user=user, message=f"Second factor reset ({deleted} devices): {reason}")
    return deleted


def _recovery_codes_issue(user) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name="Recovery codes", confirmed=True)
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def _log(*, by, user, message: str) -> None:
    LogEntry.objects.log_actions(
        user_id=by.pk, queryset=[user], action_flag=CHANGE, change_message=message
    )
