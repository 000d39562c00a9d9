"""The row locks of the back office (STYLE.md, Concurrency; the order: docs/money.md,
"Locking"): a staff user's second-factor devices and sign-in lockouts, each locked alone; an
approval request, the operation's own row, locked first, before what its approval changes (the
fee of a waiver, then the accounts the posting locks)."""

from django.db.models import QuerySet
from django_otp.plugins.otp_totp.models import TOTPDevice

from .models import ApprovalRequest, SignInLockout


def lock_first_device(devices: QuerySet):
    """The first of `devices` by id, its row locked until the transaction ends (a code is
    checked, and a throttle or a recovery code updated, by one sign-in at a time), or None."""
    return devices.select_for_update().order_by("pk").first()


def lock_totp_device(device_id, user) -> TOTPDevice:
    """The authenticator-app device `device_id` of `user`, its row locked until the
    transaction ends."""
    return TOTPDevice.objects.select_for_update().get(pk=device_id, user=user)


def lock_latest_lockout(username: str, since) -> SignInLockout | None:
    """The newest lockout of `username` refused at or after `since`, its row locked until the
    transaction ends, or None."""
    return (
        SignInLockout.objects.select_for_update()
        .filter(username=username, last_refused_at__gte=since)
        .order_by("-last_refused_at")
        .first()
    )


def lock_approval_request(approval_id: str) -> ApprovalRequest:
    """The approval request, its row locked until the transaction ends (one decision at a
    time: a second approver waits, then finds it decided), with its institution."""
    return (
        ApprovalRequest.objects.select_for_update(of=("self",))
        .select_related("institution")
        .get(pk=approval_id)
    )
