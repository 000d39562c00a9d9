"""The row locks of the back office (the order: docs/money.md, "Locking"): a staff user's enrolment
token first, then their second-factor devices (an enrolment begun, confirmed or replaced: one at
a time per token); a device alone when a code is checked; sign-in lockouts alone; an approval
request, the operation's own row, locked first, before what its approval changes (the fee of a
waiver, then the accounts the posting locks); a case alone (a note, an assignment: nothing else is
locked with it)."""

from django.db.models import QuerySet

from .models import AppDevice, ApprovalRequest, Case, EnrolmentToken, SignInLockout


def lock_first_device(devices: QuerySet):
    """The first of `devices` by id, its row locked until the transaction ends (a code is
    checked, and a throttle or a recovery code updated, by one sign-in at a time), or None."""
    return devices.select_for_update().order_by("pk").first()


def lock_enrolment_token(token_id, user) -> EnrolmentToken | None:
    """The enrolment token `token_id` of `user`, its row locked until the transaction ends (an
    enrolment begun, or confirmed, by one session at a time), or None."""
    if token_id is None:
        return None
    return EnrolmentToken.objects.select_for_update().filter(pk=token_id, user=user).first()


def lock_pending_app_device(device_id, user) -> AppDevice | None:
    """The authenticator app `device_id` of `user` that waits for its first code, its row
    locked until the transaction ends, or None (confirmed, replaced, or never this user's)."""
    if device_id is None:
        return None
    return (
        AppDevice.objects.select_for_update()
        .filter(pk=device_id, user=user, confirmed=False)
        .first()
    )


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


def lock_case(*, institution_id, content_type, object_id: str) -> Case:
    """The case of the row (`content_type`, `object_id`), made if it has none (one statement,
    `ON CONFLICT DO NOTHING`: two first notes at once make one case), its row locked until the
    transaction ends (one assignment at a time)."""
    Case.objects.bulk_create(
        [Case(institution_id=institution_id, content_type=content_type, object_id=object_id)],
        ignore_conflicts=True,
    )
    return Case.objects.select_for_update().get(content_type=content_type, object_id=object_id)
