"""The row locks of the money core, and the one order every lock of the domain is taken in.

Each app that locks rows has a `locks.py` (docs/design.md section 2) whose functions build the
locking querysets; no other module calls `select_for_update` (tests/core/test_locks.py). Two
transactions can wait for each other in a cycle (a deadlock) only if they take their locks in
different orders, so every code path takes them in this one (docs/money.md, "Locking"):

1. A queue's advisory lock, before any row: a transfer batch waits for the institution's
   batches before it (`transfers.batches`).
2. The operation's own row:
   - cards (`cards.locks.lock_card`; a batch: every card of it, by id): a card payment, a
     transfer from a card, a change of the card;
   - an authorization, then its hold (`authorizations.locks`): a presentment, a reversal;
   - a hold, then the two-phase transfer it belongs to: a resolution takes the hold first, as
     the expiry job does (`lock_due_holds`);
   - a transfer (a reversal), a fee (a waiver), a product, a customer, an API key.
3. The accounts, all of them at once, by id, in one statement: `lock_accounts`, or the
   posting functions `tx_post` and `tx_post_many` (accounts/sql/), which lock in the same order.
   A change of one account by itself (its status, overdraft limit, metadata, a card issued on
   it) locks that account alone (`lock_account`).
4. Rows written only under the locks above, with no lock of their own taken first: a card's
   spend counters (one upsert), statement lines, events.

A batch job takes its rows with SKIP LOCKED (`lock_due_holds`, `core.locks.lock_free_batch`):
it never waits for them, so they cannot close a cycle; what it locks next (the accounts of
its holds) follows the order. A row is locked alone by its own changes everywhere else (a
webhook delivery or endpoint, a monitoring rule or alert, a back-office device or lockout).
"""

from core.exceptions import NotFound

from .models import Account, Fee, Hold


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


def lock_account(account_id: str) -> Account:
    """The account, its row locked until the transaction ends: a change of the account itself
    (status, metadata) or of what is written on it (a card issued on it)."""
    return Account.objects.select_for_update().get(pk=account_id)


def lock_account_with_product(account_id: str) -> Account:
    """The account with its product, the account's row only locked until the transaction ends
    (a debit running at the same time sees the overdraft limit before or after the change)."""
    return (
        Account.objects.select_related("product").select_for_update(of=("self",)).get(pk=account_id)
    )


def lock_internal_account(*, institution_id: str, code: str, currency: str) -> Account | None:
    """The institution's internal account `code` in `currency`, its row locked until the
    transaction ends, or None when it has not been opened yet."""
    return (
        Account.objects.select_for_update()
        .filter(
            institution_id=institution_id,
            kind=Account.Kind.INTERNAL,
            internal_code=code,
            currency=currency,
        )
        .first()
    )


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


def lock_due_holds(*, now, purpose: str, size: int) -> list[tuple[str, str]]:
    """(id, account id) of at most `size` active holds of `purpose` due at `now`, in expiry
    order, locked: those another transaction holds are skipped (SKIP LOCKED), so expiry jobs
    running at once never wait for each other, nor for a resolution holding a hold."""
    return list(
        Hold.objects.select_for_update(skip_locked=True)
        .filter(status=Hold.Status.ACTIVE, expires_at__lte=now, purpose=purpose)
        .order_by("expires_at")
        .values_list("pk", "account_id")[:size]
    )


def lock_fee(fee_id: str) -> Fee:
    """The fee with its account's institution, its card and its authorization, the fee's row
    only locked until the transaction ends."""
    return (
        Fee.objects.select_for_update(of=("self",))
        .select_related("account__institution", "card", "authorization")
        .get(pk=fee_id)
    )


def lock_product(product):
    """`product` (an account or a card product: `cards` changes its products the same way)
    again, its row locked until the transaction ends, with its institution."""
    return (
        type(product)
        .objects.select_for_update(of=("self",))
        .select_related("institution")
        .get(pk=product.pk)
    )
