"""The row locks of card authorizations (docs/design.md section 2). An authorization is the
operation's own row: locked before its hold and its accounts (docs/money.md, "Locking")."""

from .models import Authorization, AuthorizationIncrement


def lock_authorization(authorization_id: str, *related: str) -> Authorization:
    """The authorization, its row locked until the transaction ends (that row only), with the
    `related` rows read once it is locked (select_related).

    Two statements, on purpose: a locking statement that waited for the row re-checks only the
    locked row when it gets it, keeping the joined rows it read before the wait. Its hold is
    replaced by an increment or a presentment that is not final (a new hold, a new `hold_id`),
    so a request that waited for one of those read the new row joined to no hold and failed
    (tests/authorizations/test_increments.py). Read after the lock, in a new snapshot, the
    row and its hold are the committed ones."""
    if not related:
        return Authorization.objects.select_for_update().get(pk=authorization_id)
    Authorization.objects.select_for_update().filter(pk=authorization_id).values_list(
        "pk", flat=True
    ).get()
    return Authorization.objects.select_related(*related).get(pk=authorization_id)


def lock_stranded_authorization(*, created_before) -> Authorization | None:
    """The oldest authorization still awaiting its program that was created before
    `created_before`, its row locked (that row only), with what deciding it reads; None when
    there is none. Rows another transaction holds are skipped (SKIP LOCKED: a request deciding
    its own right now), so the recovery job never waits for them."""
    return (
        Authorization.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("hold", "card__institution", "account", "decisioning_endpoint")
        .filter(decision=Authorization.Decision.AWAITING_PROGRAM, created_at__lt=created_before)
        .order_by("created_at")
        .first()
    )


def lock_stranded_increment(*, created_before) -> AuthorizationIncrement | None:
    """The oldest increment still awaiting its program that was created before
    `created_before`, with its authorization's row locked (the row that orders everything
    done to an authorization and its increments) and read once locked, with what deciding it
    reads; None when there is none. Authorizations another transaction holds are skipped (SKIP
    LOCKED: a request deciding its increment right now). An increment decided by a request
    that committed between the scan and the lock is read again and passed over."""
    while True:
        candidate = (
            AuthorizationIncrement.objects.select_related("authorization")
            .select_for_update(skip_locked=True, of=("authorization",))
            .filter(
                decision=AuthorizationIncrement.Decision.AWAITING_PROGRAM,
                created_at__lt=created_before,
            )
            .only("pk", "authorization__id")
            .order_by("created_at")
            .first()
        )
        if candidate is None:
            return None
        increment = AuthorizationIncrement.objects.select_related(
            "decisioning_endpoint",
            "authorization__hold",
            "authorization__card__institution",
            "authorization__account",
        ).get(pk=candidate.pk)
        if increment.awaiting_program:
            return increment
