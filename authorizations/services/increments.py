"""Incremental authorizations (docs/card-transactions.md, "Incremental authorizations"): the
network raising a pending authorization by `amount` (a hotel's stay extended, a fuel pump, a car
rental), checked like a new authorization of that amount at the same merchant.

On the authorization's row locked first, then its card and its account (the lock order of
docs/money.md), the checks of `authorize` in their order, but for the PIN (an increment carries
none): the card's status, expiry and security settings as they are now, the limits (the
authorization's new total against `perTransaction`, the increment against daily, monthly and
daily cash), the monitoring rules (screening the increment), the account's status and funds
for the increment. A partial approval is not offered: an increment is approved whole or
declined.

Approved: the authorization's `amount` grows by it (and its `requestedAmount` when it was
approved in part), its hold is replaced by one of the new total (a hold's amount never changes:
`hold.released`, `hold.created`), its `Unsettled` line follows the new hold and total, the
increment counts against the card's limits on the authorization's day (so its reversal, expiry
or presentment gives back what was counted), `authorization.incremented`. Declined: the
increment is recorded with its decline code and nothing else changes,
`authorization.increment_declined`. Either way the answer is 201: a decline is a result.

The program's decisioning endpoint is not asked about an increment (docs/decisioning.md, "What
is not built yet"): TX's checks decide it.
"""

from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Hold, StatementLine
from accounts.services import hold_release
from cards.models import Card
from cards.services import count_payment, lock_card
from core.actors import Actor
from core.rows import new_row
from monitoring.services import screen

from .. import declines
from ..models import Authorization, AuthorizationIncrement
from .authorize import (
    Decline,
    check_account,
    check_card,
    check_card_limits,
    check_screening,
    emit,
    raise_alerts,
)
from .clearing import lock_pending
from .held import hold_again

# The state an approved increment takes its authorization to (409 names it).
INCREMENTED = "incremented"


def authorization_increment(
    *, authorization: Authorization, amount: int, actor: Actor
) -> AuthorizationIncrement:
    """Raise a pending authorization by `amount`, or decline the increment (see the module
    docstring); 409 `invalid_state_transition` unless the authorization is pending."""
    with transaction.atomic(savepoint=False):
        authorization = lock_pending(authorization, INCREMENTED)
        card = lock_card(authorization.card_id)
        account = lock_accounts([authorization.account_id])[authorization.account_id]
        increment = new_row(
            AuthorizationIncrement,
            institution_id=authorization.institution_id,
            authorization=authorization,
            amount=amount,
            **actor.stamp("created_by"),
        )
        screening = None
        try:
            check_card(card, account, authorization)
            _check_limits(card, authorization, amount)
            screening = screen(
                card=card,
                amount=amount,
                currency=authorization.currency,
                merchant=authorization.merchant,
            )
            check_screening(screening)
            check_account(account, amount, partial_approval=False)
        except Decline as decline:
            increment.approved = False
            increment.decline_code = decline.code
            increment.decline_reason = decline.reason
            increment.decline_details = decline.details or None
            increment.save(force_insert=True)
            raise_alerts(screening, authorization, authorization.merchant, amount)
            emit(
                authorization,
                "authorization.increment_declined",
                _event_data(increment),
            )
            return increment
        _raise(authorization, card, amount)
        increment.approved = True
        increment.hold = authorization.hold
        increment.save(force_insert=True)
        raise_alerts(screening, authorization, authorization.merchant, amount)
        emit(authorization, "authorization.incremented", _event_data(increment))
    return increment


def _check_limits(card: Card, authorization: Authorization, amount: int) -> None:
    """The card's limits for `amount` more: the new total is one transaction
    (`perTransaction`); the increment is what the day and the month spend on top."""
    total = authorization.amount + amount
    if total > card.limit_per_transaction:
        raise Decline(
            declines.LIMIT_EXCEEDED,
            "The card's perTransaction limit does not allow this amount.",
            {
                "limit": "perTransaction",
                "value": card.limit_per_transaction,
                "used": authorization.amount,
                "amount": amount,
                "remaining": max(card.limit_per_transaction - authorization.amount, 0),
            },
        )
    check_card_limits(card, amount, authorization.type == Authorization.Type.CASH)


def _raise(authorization: Authorization, card: Card, amount: int) -> None:
    """The approved increment: the hold replaced by one of the new total, the `Unsettled`
    line following it, the usage counted, the authorization's amounts raised."""
    held = authorization.hold
    hold_release(hold=held, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    authorization.hold = hold_again(authorization, held, held.amount + amount)
    line = StatementLine.objects.get(hold=held)
    line.hold = authorization.hold
    line.amount += amount
    # What the merchant charged in its currency is known for the first amount only.
    line.merchant_amount = line.merchant_currency = None
    line.save(update_fields=["hold", "amount", "merchant_amount", "merchant_currency"])
    count_payment(
        card,
        authorization.spend_day,
        amount,
        currency=authorization.currency,
        cash=authorization.type == Authorization.Type.CASH,
    )
    authorization.amount += amount
    if authorization.requested_amount is not None:
        authorization.requested_amount += amount
    authorization.updated_at = timezone.now()
    authorization.save(update_fields=["hold", "amount", "requested_amount", "updated_at"])


def _event_data(increment: AuthorizationIncrement) -> dict:
    data = {"increment_id": increment.pk, "increment_amount": increment.amount}
    if not increment.approved:
        data["increment_decline_code"] = increment.decline_code
    return data
