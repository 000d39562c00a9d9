"""Opening accounts, changing their status, and the institution's internal accounts."""

import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone
from stdnum import luhn

from core.exceptions import AccountNotEmpty, InvalidStateTransition, ValidationFailed
from core.operations import Outcome, changed, unchanged
from customers.models import Customer
from events.services import emit_for
from institutions.models import Institution

from ..models import Account, AccountProduct, Hold

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
) -> Account:
    """Open an account of `product` for `customer` (and `secondary_customer`, the second holder
    of a joint account), all of `institution`.

    The currency must be the product's (400 `validation_error` otherwise). Emits
    `account.opened`.
    """
    holders = [customer] + ([secondary_customer] if secondary_customer else [])
    if product.institution_id != institution.pk or any(
        holder.institution_id != institution.pk for holder in holders
    ):
        raise ValueError("customers and product must belong to the institution")
    if currency != product.currency:
        raise ValidationFailed(
            details={"currency": f"Product {product.code} holds {product.currency} only."}
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
                )
                emit_for(account, "account.opened", data=_opened_data(account))
            return account
        except IntegrityError as error:  # an account number drawn twice: draw again
            if "account_number_unique" not in str(error):
                raise
    raise RuntimeError("Could not draw a unique account number.")


def _opened_data(account: Account) -> dict:
    data = {"customerId": account.customer_id, "productRid": account.product_id}
    if account.secondary_customer_id:
        data["secondaryCustomerId"] = account.secondary_customer_id
    return data


def account_set_status(*, account: Account, status: str) -> Outcome[Account]:
    """Move an account to `status`: active <-> frozen, active | frozen -> closed (terminal).

    Closing needs a zero balance and no active hold (422 `account_not_empty`); any other move
    is 409 `invalid_state_transition`. Emits `account.status_changed`; a move to the current
    status changes nothing and emits nothing (`Outcome.changed` false). `Outcome.previous` is
    the status it moved from.
    """
    with transaction.atomic(savepoint=False):
        account = Account.objects.select_for_update().get(pk=account.pk)
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


def internal_account(*, institution: Institution, code: str, currency: str) -> Account:
    """The institution's internal account `code` in `currency`, created on first use."""
    account, _ = Account.objects.get_or_create(
        institution=institution,
        kind=Account.Kind.INTERNAL,
        internal_code=code,
        currency=currency,
    )
    return account
