"""Stop payments: a customer's instruction to their bank to return the ACH debits of one
originator to one of their accounts (docs/payments.md, "Stop payments").

A stop names the account (a customer account of the institution), the originator's **Company
Identification** as the debit's batch header carries it (1 to 10 characters of NACHA's
alphanumeric set: printable ASCII; trailing spaces are the header's padding and leading ones
are kept; compared without regard to case), optionally an **amount** (only a debit of exactly
that amount is stopped), an **expiry** (none: until cancelled) and a reason. It is `active`
until it is cancelled (`cancelled`) or its time passes (`expired`, shown so; stored `active`).

An inbound debit (not a prenote) whose account has an active, unexpired stop of its
originator, at its amount when the stop names one, is returned R08 on its settlement date,
after the account's own refusals (none, closed, frozen, not USD) and before its funds
(`payments.services.inbound`). A credit is never stopped.
"""

from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.locks import lock_account
from accounts.models import Account
from accounts.selectors import account_get
from core.actors import Actor
from core.exceptions import (
    AccountNotActive,
    CurrencyMismatch,
    InvalidStateTransition,
    ValidationFailed,
)
from core.operations import Outcome, changed
from core.rows import new_row, row_update
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.models import Institution

from ..locks import lock_stop_payment
from ..models import StopPayment
from .external_accounts import USD

Status = StopPayment.Status
MAX_COMPANY_ID = 10
MAX_REASON = 200
PRINTABLE = frozenset(chr(code) for code in range(0x20, 0x7F))


def company_id_checked(value) -> str:
    """The Company Identification as a stop stores it (module docstring), or 400."""
    if not isinstance(value, str) or not value.strip(" "):
        raise ValidationFailed(details={"company_id": "Must be 1 to 10 characters."})
    if any(char not in PRINTABLE for char in value):
        raise ValidationFailed(
            details={"company_id": "Must be printable ASCII (NACHA's alphanumeric set)."}
        )
    value = value.rstrip(" ").upper()
    if len(value) > MAX_COMPANY_ID:
        raise ValidationFailed(details={"company_id": "Must be 1 to 10 characters."})
    return value


def reason_checked(value: str, field: str = "reason") -> str:
    if not isinstance(value, str) or len(value) > MAX_REASON:
        raise ValidationFailed(details={field: f"At most {MAX_REASON} characters."})
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValidationFailed(details={field: "Must have no control characters."})
    return value.strip()


def _event_data(stop: StopPayment) -> dict:
    data = {
        "stop_payment_id": stop.pk,
        "account_id": stop.account_id,
        "company_id": stop.company_id,
        "amount": stop.amount,
        "currency": stop.currency,
        "expires_at": iso_millis(stop.expires_at) if stop.expires_at else None,
        "status": stop.status,
    }
    if stop.reason:
        data["reason"] = stop.reason
    return data


def stop_payment_create(
    *,
    institution: Institution,
    account_id: str,
    company_id: str,
    amount: int | None = None,
    expires_at: datetime | None = None,
    reason: str = "",
    actor: Actor,
) -> StopPayment:
    """A new `active` stop of the originator `company_id`'s debits to the account (module
    docstring). 404 for an account that is not a customer account of the institution; 400 for a
    company id that is not 1 to 10 printable ASCII characters, an amount that is not a
    positive integer, an expiry that is not in the future; 422 `account_not_active` for a
    closed account, `currency_mismatch` for one not in USD (ACH debits reach USD accounts only).
    Emits `stop_payment.created` (the actor's)."""
    errors = {}
    try:
        company_id = company_id_checked(company_id)
    except ValidationFailed as failed:
        errors.update(failed.details)
    if amount is not None and (
        isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0
    ):
        errors["amount"] = "Must be a positive integer of minor units."
    now = timezone.now()
    if expires_at is not None and expires_at <= now:
        errors["expires_at"] = "Must be in the future."
    if errors:
        raise ValidationFailed(details=errors)
    reason = reason_checked(reason)
    account = account_get(institution=institution, account_id=account_id)
    with transaction.atomic(savepoint=False):
        # The account's row, so that a close racing this request is seen.
        account = lock_account(account.pk)
        if account.status == Account.Status.CLOSED:
            raise AccountNotActive(
                "The account is closed: no debit can reach it.",
                details={"account_id": account.pk, "status": account.status},
            )
        if account.currency != USD:
            raise CurrencyMismatch(
                f"ACH debits reach USD accounts only; the account is in {account.currency}.",
                details={"account_currency": account.currency, "rail_currency": USD},
            )
        stop = new_row(
            StopPayment,
            institution=institution,
            account=account,
            company_id=company_id,
            amount=amount,
            currency=account.currency,
            expires_at=expires_at,
            reason=reason,
            status=Status.ACTIVE,
            **actor.stamp("created_by"),
        )
        stop.save(force_insert=True)
        emit_for(stop, "stop_payment.created", data=_event_data(stop), actor=actor)
    return stop


def stop_payment_cancel(
    *, stop: StopPayment, reason: str = "", actor: Actor
) -> Outcome[StopPayment]:
    """The stop ends: debits of its originator reach the account again. 409
    `invalid_state_transition` when it is cancelled already or has expired. Emits
    `stop_payment.cancelled` (the actor's)."""
    reason = reason_checked(reason)
    with transaction.atomic(savepoint=False):
        stop = lock_stop_payment(stop.pk)
        now = timezone.now()
        shown = stop.shown_status(now)
        if shown != Status.ACTIVE:
            raise InvalidStateTransition(
                f"The stop payment is {shown}.", from_state=shown, to_state=Status.CANCELLED
            )
        row_update(
            stop,
            {"status": Status.CANCELLED, "cancelled_at": now, "cancelled_reason": reason},
        )
        data = _event_data(stop)
        if reason:
            data["cancelled_reason"] = reason
        emit_for(stop, "stop_payment.cancelled", data=data, actor=actor)
    return changed(stop, Status.ACTIVE)


def stop_payment_matching(
    *, account_id: str, company_id: str, amount: int, at: datetime
) -> StopPayment | None:
    """The account's oldest active stop, unexpired at `at`, of the originator `company_id`
    (compared without case or padding) and of `amount` when it names one; None when none."""
    return (
        StopPayment.objects.filter(
            account_id=account_id,
            status=Status.ACTIVE,
            company_id=company_id.rstrip(" ").upper(),
        )
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=at))
        .filter(Q(amount__isnull=True) | Q(amount=amount))
        .order_by("pk")
        .first()
    )
