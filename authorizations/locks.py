"""The row locks of card authorizations (STYLE.md, Concurrency). An authorization is the
operation's own row: locked before its hold and its accounts (docs/money.md, "Locking")."""

from .models import Authorization


def lock_authorization(authorization_id: str, *related: str) -> Authorization:
    """The authorization, its row locked until the transaction ends (that row only), with the
    `related` rows read along (select_related)."""
    return (
        Authorization.objects.select_for_update(of=("self",))
        .select_related(*related)
        .get(pk=authorization_id)
    )


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
