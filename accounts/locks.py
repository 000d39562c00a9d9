"""The one place that builds the row-locking querysets of the money core.

Every code path that changes balances locks in the same order, so two transactions can never
wait for each other in a cycle: first the operation's own row (a hold or a transfer), then the
accounts it touches, always ordered by primary key.
"""

from core.exceptions import NotFound

from .models import Account, Hold


def lock_accounts(account_ids) -> dict[str, Account]:
    """Lock the accounts (SELECT ... FOR UPDATE, ordered by id) and return them by id."""
    ids = sorted(set(account_ids))
    accounts = {
        account.pk: account
        for account in Account.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    }
    if len(accounts) != len(ids):
        raise NotFound("An account of this operation does not exist.")
    return accounts


def lock_hold(hold_id: str) -> Hold:
    # With its account (not locked here: `accounts.posting.post` locks it), for statement lines.
    hold = (
        Hold.objects.select_for_update(of=("self",))
        .select_related("account")
        .filter(pk=hold_id)
        .first()
    )
    if hold is None:
        raise NotFound("No hold with this id.")
    return hold
