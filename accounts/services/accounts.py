"""Opening accounts, changing their status, and the institution's internal accounts."""

import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone
from stdnum import luhn

from core.exceptions import (
    AccountNotActive,
    AccountNotEmpty,
    BalanceOutOfRange,
    InvalidStateTransition,
    OverdraftLimitInUse,
    ProductRetired,
    ValidationFailed,
)
from core.metadata import metadata_check, metadata_merge
from core.operations import Outcome, changed, unchanged
from core.rows import row_update
from customers.models import Customer
from events.services import emit_for
from institutions.models import Institution

from ..closing import close_checks_run
from ..locks import lock_account, lock_account_with_product
from ..models import Account, AccountProduct, Hold
from ..models.accounts import BALANCE_MAX

ACCOUNT_NUMBER_DIGITS = 12

# status -> statuses it may move to (closed is terminal).
TRANSITIONS = {
    Account.Status.ACTIVE: {Account.Status.FROZEN, Account.Status.CLOSED},
    Account.Status.FROZEN: {Account.Status.ACTIVE, Account.Status.CLOSED},
    Account.Status.CLOSED: set(),
}


def new_account_number() -> str:
    """11 random digits and a Luhn check digit: a typo in one digit is caught."""
    body = "".join(str(secrets.randbelow(10)) for _ in range(ACCOUNT_NUMBER_DIGITS - 1))
    return body + luhn.calc_check_digit(body)


def account_create(
    *,
    institution: Institution,
    customer: Customer,
    product: AccountProduct,
    currency: str,
    secondary_customer: Customer | None = None,
    metadata: dict | None = None,
) -> Account:
    """Open an account of `product` for `customer` (and `secondary_customer`, the second holder
    of a joint account), all of `institution`.

    The currency must be the product's (400 `validation_error` otherwise). A retired product
    opens no new account (422 `product_retired`). `metadata`: the client's (`core.metadata`;
    400 `validation_error` when invalid). Emits `account.opened`.
    """
    metadata = metadata_check(metadata or {})
    holders = [customer] + ([secondary_customer] if secondary_customer else [])
    if product.institution_id != institution.pk or any(
        holder.institution_id != institution.pk for holder in holders
    ):
        raise ValueError("customers and product must belong to the institution")
    if currency != product.currency:
        raise ValidationFailed(
            details={"currency": f"Product {product.code} holds {product.currency} only."}
        )
    if product.status == AccountProduct.Status.RETIRED:
        raise ProductRetired(
            f"Product {product.pk} is retired: it opens no new account.",
            details={"product_id": product.pk, "status": product.status},
        )
    for _ in range(5):
        try:
            with transaction.atomic():
                account = Account.objects.create(
                    institution=institution,
                    customer=customer,
                    secondary_customer=secondary_customer,
                    product=product,
                    currency=currency,
                    account_number=new_account_number(),
                    metadata=metadata,
                )
                emit_for(account, "account.opened", data=_opened_data(account))
            return account
        except IntegrityError as error:  # an account number drawn twice: draw again
            if "account_number_unique" not in str(error):
                raise
    raise RuntimeError("Could not draw a unique account number.")


def _opened_data(account: Account) -> dict:
    data = {"customer_id": account.customer_id, "product_id": account.product_id}
    if account.secondary_customer_id:
        data["secondary_customer_id"] = account.secondary_customer_id
    return data


def account_set_status(*, account: Account, status: str) -> Outcome[Account]:
    """Move an account to `status`: active <-> frozen, active | frozen -> closed (terminal).

    Closing needs what the apps above register (`accounts.closing`: interest posted, 422
    `interest_not_posted`), then a zero balance and no active hold (422 `account_not_empty`);
    any other move is 409 `invalid_state_transition`. Emits `account.status_changed`; a move
    to the current status changes nothing and emits nothing (`Outcome.changed` false).
    `Outcome.previous` is the status it moved from.
    """
    with transaction.atomic(savepoint=False):
        account = lock_account(account.pk)
        previous = account.status
        if status == previous:
            return unchanged(account)
        if status not in TRANSITIONS[previous]:
            raise InvalidStateTransition(
                f"An account cannot go from {previous} to {status}.",
                from_state=previous,
                to_state=status,
            )
        if status == Account.Status.CLOSED:
            # Interest not yet posted first (accounts.closing): posting it changes the balance.
            close_checks_run(account)
            has_active_hold = Hold.objects.filter(
                account=account, status=Hold.Status.ACTIVE
            ).exists()
            if account.posted != 0 or account.pending != 0 or has_active_hold:
                raise AccountNotEmpty(
                    details={"posted": account.posted, "pending": account.pending}
                )
        account.status = status
        account.updated_at = timezone.now()
        account.save(update_fields=["status", "updated_at"])
        emit_for(account, "account.status_changed", data={"from": previous, "to": status})
    return changed(account, previous)


def check_overdraft_raise(product, limit: int) -> None:
    """400 `validation_error` when `product` does not give an account an overdraft limit raised
    to `limit`: it allows no overdraft, or caps it lower (`max_overdraft_limit`)."""
    if not product.allows_overdraft:
        raise ValidationFailed(
            details={"overdraft_limit": f"Product {product.pk} does not allow overdraft."}
        )
    if limit > product.max_overdraft_limit:
        raise ValidationFailed(
            details={
                "overdraft_limit": f"At most {product.max_overdraft_limit} on product {product.pk}."
            }
        )


def account_set_overdraft_limit(*, account: Account, limit: int) -> Outcome[Account]:
    """Set how far below zero the account may go (`available = posted - pending + limit`).

    A higher limit needs a product that allows overdraft and is at most its
    `max_overdraft_limit` (400 `validation_error` otherwise; a lower one is always allowed); a
    limit below what the account uses now (its posted minus pending is below `-limit`) is 422
    `overdraft_limit_in_use`; one that would take `available` past its bigint column is 422
    `balance_out_of_range`; a closed account's is 422 `account_not_active`. The account row
    is locked, so a debit running at the same time either sees the old limit and finishes
    first, or the new one. Emits `account.overdraft_limit_changed`; the same limit again
    changes nothing.
    """
    with transaction.atomic(savepoint=False):
        account = lock_account_with_product(account.pk)
        previous = account.overdraft_limit
        if limit == previous:
            return unchanged(account)
        if account.status == Account.Status.CLOSED:
            raise AccountNotActive(f"Account {account.pk} is closed.")
        # The product caps what is given, not what is taken back: after its cap was lowered
        # (or its overdraft turned off) an account's limit may still go down.
        if limit > previous:
            check_overdraft_raise(account.product, limit)
        if account.posted - account.pending + limit > BALANCE_MAX:
            # The generated `available` could not be written (bigint).
            raise BalanceOutOfRange(details={"account_id": account.pk})
        if account.posted - account.pending + limit < 0:
            raise OverdraftLimitInUse(
                details={
                    "posted": account.posted,
                    "pending": account.pending,
                    "overdraft_limit": limit,
                }
            )
        account.overdraft_limit = limit
        account.updated_at = timezone.now()
        account.save(update_fields=["overdraft_limit", "updated_at"])
        emit_for(account, "account.overdraft_limit_changed", data={"from": previous, "to": limit})
    return changed(account, previous)


def account_update_metadata(*, account: Account, metadata: dict) -> Outcome[Account]:
    """Merge `metadata` into the account's (`core.metadata.metadata_merge`: null removes a key;
    400 `validation_error` when invalid or over the limits). Emits `account.updated`
    (`changedFields: ["metadata"]`); a merge that changes nothing emits nothing."""
    with transaction.atomic(savepoint=False):
        account = lock_account(account.pk)
        previous = row_update(account, {"metadata": metadata_merge(account.metadata, metadata)})
        if not previous:
            return unchanged(account)
        emit_for(account, "account.updated", data={"changed_fields": ["metadata"]})
    return changed(account, previous["metadata"])


def internal_account(*, institution: Institution, code: str, currency: str) -> Account:
    """The institution's internal account `code` in `currency`, created on first use."""
    account, _ = Account.objects.get_or_create(
        institution=institution,
        kind=Account.Kind.INTERNAL,
        internal_code=code,
        currency=currency,
    )
    return account
