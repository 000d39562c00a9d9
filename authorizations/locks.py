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
