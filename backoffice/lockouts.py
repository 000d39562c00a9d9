"""A record and a log line for each lockout of a staff username (PCI DSS 8.3.4, 10.2.1.4).

django-axes sends `user_locked_out` on the failure that reaches AXES_FAILURE_LIMIT and again on
every sign-in it refuses while the username stays locked. The first starts a `SignInLockout`
row and logs a WARNING on `tx.staff` (what alerting watches); the others are counted on it.
Where this lives: events (the `events` app) are an institution's outbox, delivered to its
webhooks, and a staff username belongs to no institution; the admin's `LogEntry` records what
a signed-in staff user did, and a lockout has no such actor. So the back office keeps its own
table, read-only in the admin.
"""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction as db_transaction
from django.db.models import F
from django.utils import timezone

from backoffice.locks import lock_latest_lockout
from backoffice.models import SignInLockout

logger = logging.getLogger("tx.staff")


def lockout_record(*, username: str, ip_address: str | None, starts: bool) -> SignInLockout:
    """Record a lockout of `username` (`starts`: this failure reached the limit) or a sign-in
    refused during one. A refusal with no lockout on record within the cool-off (the limit was
    crossed by concurrent failures, none of which saw exactly the limit) starts one."""
    now = timezone.now()
    user_model = get_user_model()
    with db_transaction.atomic():
        current = None
        if not starts:
            current = lock_latest_lockout(username, now - settings.AXES_COOLOFF_TIME)
        if current is not None:
            current.refused_attempts = F("refused_attempts") + 1
            current.last_refused_at = now
            current.save(update_fields=["refused_attempts", "last_refused_at"])
            return current
        lockout = SignInLockout.objects.create(
            username=username,
            user=user_model._default_manager.filter(
                **{user_model.USERNAME_FIELD: username}
            ).first(),
            ip_address=ip_address or None,
            started_at=now,
            last_refused_at=now,
        )
    logger.warning(
        "staff sign-in locked out",
        extra={"username": username, "ipAddress": ip_address, "lockoutId": lockout.pk},
    )
    return lockout


def on_user_locked_out(sender, request, username, ip_address, **kwargs):
    """axes' `user_locked_out` receiver (connected by `BackofficeConfig.ready`)."""
    if not username:
        return  # axes locks usernames only: nothing was locked
    failures = getattr(request, "axes_failures_since_start", None)
    lockout_record(
        username=username,
        ip_address=ip_address,
        starts=failures is not None and failures <= settings.AXES_FAILURE_LIMIT,
    )
