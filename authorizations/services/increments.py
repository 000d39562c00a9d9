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

Then, in v2, the card's program when it has a decisioning endpoint, as for a new authorization
(docs/decisioning.md, "Increments"): a live endpoint leaves the increment `awaiting_program`
with the increment already held (`hold_more`: the authorization's hold replaced by one of the
new total, the usage counted) and its request asks the program with nothing open
(`authorizations.services.increment_program`); the authorization's amount and line change only
once it is approved. While an increment awaits, the authorization takes no other message (409,
`clearing.lock_pending`).

Approved: the authorization's `amount` grows by it (and its `requestedAmount` when it was
approved in part), its hold is replaced by one of the new total (a hold's amount never changes:
`hold.released`, `hold.created`), its `Unsettled` line follows the new hold and total, the
increment counts against the card's limits on the authorization's day (so its reversal, expiry
or presentment gives back what was counted), `authorization.incremented`. Declined by TX's
checks: the increment is recorded with its decline code and nothing else changes; declined
after it was held: the hold of the old total is placed again and the usage given back
(`hold_less`). Either way `authorization.increment_declined`, and the answer is 201: a decline
is a result.
"""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Hold, StatementLine
from accounts.services import hold_release
from cards.models import Card
from cards.services import count_payment, lock_card
from core.actors import Actor
from core.rows import new_row
from decisioning.models import DecisioningEndpoint
from decisioning.selectors import decisioning_endpoint_for_card
from monitoring.services import screen

from .. import declines
from ..models import Authorization, AuthorizationIncrement
from .authorize import (
    Decline,
    check_account,
    check_account_active,
    check_card,
    check_card_limits,
    check_screening,
    emit,
    hold_expiry,
    program_gate,
    raise_alerts,
)
from .clearing import lock_pending
from .funding import is_program_funded
from .held import give_back, hold_again

# The state an approved increment takes its authorization to (409 names it).
INCREMENTED = "incremented"


def authorization_increment(
    *, authorization: Authorization, amount: int, actor: Actor, ask_program: bool = False
) -> AuthorizationIncrement:
    """Raise a pending authorization by `amount`, or decline the increment (see the module
    docstring); 409 `invalid_state_transition` unless the authorization is pending and no other
    increment of it awaits its program. `ask_program` (v2): the card's decisioning endpoint
    takes part as in `authorize.authorization_create`; a live one's increment is returned
    `awaiting_program`, for the caller to ask once this transaction has committed."""
    with transaction.atomic(savepoint=False):
        authorization = lock_pending(authorization, INCREMENTED)
        card = lock_card(authorization.card_id)
        account = lock_accounts([authorization.account_id])[authorization.account_id]
        endpoint = decisioning_endpoint_for_card(card) if ask_program else None
        increment = new_row(
            AuthorizationIncrement,
            institution_id=authorization.institution_id,
            authorization=authorization,
            amount=amount,
            **actor.stamp("created_by"),
        )
        increment.decided_at = increment.created_at
        screening = None
        forced = False
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
            if jit_funds(authorization, endpoint):
                # Its program funds it too, once it approves: asked before any funds check.
                check_account_active(account)
                program_gate(increment, endpoint)
                if not increment.awaiting_program:  # not called: `on_failure` decides
                    forced = jit_increment_stand_in(increment, endpoint, account)
            else:
                check_account(account, amount, partial_approval=False)
                if endpoint is not None:
                    program_gate(increment, endpoint)
        except Decline as decline:
            increment_declined(increment, decline)
            increment.save(force_insert=True)
            raise_alerts(screening, authorization, authorization.merchant, amount)
            increment_declined_record(authorization, increment)
            return increment
        if increment.awaiting_program and increment.program_mode == DecisioningEndpoint.Mode.JIT:
            # Nothing held until the program approves and funds it; the usage counts now.
            count_more(authorization, card, amount)
            raise_alerts(screening, authorization, authorization.merchant, amount)
            increment.decided_at = None
            increment.save(force_insert=True)
            return increment
        hold_more(authorization, card, amount, forced=forced)
        increment.hold = authorization.hold
        raise_alerts(screening, authorization, authorization.merchant, amount)
        if increment.awaiting_program:
            increment.decided_at = None
            increment.save(force_insert=True)
            return increment
        grow(authorization, amount)
        increment.decision = AuthorizationIncrement.Decision.APPROVED
        increment.save(force_insert=True)
        increment_approved_record(authorization, increment)
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


def jit_funds(authorization: Authorization, endpoint: DecisioningEndpoint | None) -> bool:
    """Whether a JIT program funds an increment of `authorization`: its endpoint is one, and it
    funded the authorization itself (one that TX or a stand-in approved is the account's own)."""
    return (
        endpoint is not None
        and endpoint.mode == DecisioningEndpoint.Mode.JIT
        and is_program_funded(authorization)
    )


def jit_increment_stand_in(
    increment: AuthorizationIncrement, endpoint: DecisioningEndpoint, account
) -> bool:
    """A JIT program's increment it did not decide: `on_failure` as for an authorization
    (`authorize.jit_stand_in`), nothing funded. `decline`: declined by the caller already;
    `standin`: the account's own funds must cover it (Decline `insufficient_funds`);
    `approve`: held whatever the account has (forced). Returns whether the hold is forced."""
    if endpoint.on_failure == DecisioningEndpoint.OnFailure.APPROVE:
        return True
    check_account(account, increment.amount, partial_approval=False)
    return False


def hold_more(authorization: Authorization, card: Card, amount: int, forced: bool = False) -> None:
    """`amount` more held and counted: the authorization's hold replaced by one of its total
    and `amount`, its `Unsettled` line following the new hold, the usage counted on the
    authorization's day. Its amounts stay as they are (`grow` raises them). `forced`: held
    whatever the account has (a JIT program's `on_failure: approve`)."""
    hold_what_is_counted(authorization, amount, forced=forced)
    count_more(authorization, card, amount)


def count_more(authorization: Authorization, card: Card, amount: int) -> None:
    """`amount` more counted against the card's limits on the authorization's day."""
    count_payment(
        card,
        authorization.spend_day,
        amount,
        currency=authorization.currency,
        cash=authorization.type == Authorization.Type.CASH,
    )


def hold_what_is_counted(authorization: Authorization, amount: int, forced: bool = False) -> None:
    """`amount` more held (its usage counted already): the hold replaced by one of the new
    total, its line following."""
    _hold_again(authorization, authorization.hold.amount + amount, forced=forced)


def hold_less(authorization: Authorization, amount: int) -> None:
    """Undo `hold_more(amount)` (the program declined what TX held): the hold replaced by one
    of `amount` less, whatever is available now (it held that already), the usage given
    back."""
    _hold_again(authorization, authorization.hold.amount - amount)
    give_back(authorization, amount)


def _hold_again(authorization: Authorization, amount: int, forced: bool = False) -> None:
    held = authorization.hold
    hold_release(hold=held, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    authorization.hold = hold_again(authorization, held, amount, forced=forced)
    StatementLine.objects.filter(hold=held).update(hold=authorization.hold)
    authorization.updated_at = timezone.now()
    authorization.save(update_fields=["hold", "updated_at"])


def grow(authorization: Authorization, amount: int) -> None:
    """The approved increment in the authorization's amounts and its `Unsettled` line (held
    already by `hold_more`), and its hold's expiry pushed to AUTHORIZATION_HOLD_DAYS from now
    when that is later: as the schemes count an authorization's validity from its latest
    approved increment (a hotel stay extended on day 6 of 7 is held 7 more days), never
    shortened (docs/card-transactions.md, "Incremental authorizations")."""
    hold = authorization.hold
    expires_at = max(hold.expires_at, hold_expiry())
    if expires_at != hold.expires_at:
        Hold.objects.filter(pk=hold.pk).update(expires_at=expires_at)
        hold.expires_at = expires_at
    # What the merchant charged in its currency is known for the first amount only.
    StatementLine.objects.filter(hold=authorization.hold).update(
        amount=F("amount") + amount, merchant_amount=None, merchant_currency=None
    )
    authorization.amount += amount
    if authorization.requested_amount is not None:
        authorization.requested_amount += amount
    authorization.updated_at = timezone.now()
    authorization.save(update_fields=["amount", "requested_amount", "updated_at"])


def increment_declined(increment: AuthorizationIncrement, decline: Decline) -> None:
    """Write `decline` on the increment (not saved)."""
    increment.decision = AuthorizationIncrement.Decision.DECLINED
    increment.decline_code = decline.code
    increment.decline_reason = decline.reason
    increment.decline_details = decline.details or None


def increment_approved_record(
    authorization: Authorization, increment: AuthorizationIncrement
) -> None:
    """`authorization.incremented` (and `authorization.stood_in` when the program's
    `on_failure` approved it)."""
    emit(authorization, "authorization.incremented", _event_data(increment))
    _emit_stood_in(authorization, increment)


def increment_declined_record(
    authorization: Authorization, increment: AuthorizationIncrement
) -> None:
    """`authorization.increment_declined` (and `authorization.stood_in` when the program's
    `on_failure` declined it)."""
    emit(authorization, "authorization.increment_declined", _event_data(increment))
    _emit_stood_in(authorization, increment)


def _emit_stood_in(authorization: Authorization, increment: AuthorizationIncrement) -> None:
    if increment.decided_by != AuthorizationIncrement.DecidedBy.STANDIN:
        return
    emit(
        authorization,
        "authorization.stood_in",
        {
            **_event_data(increment),
            "on_failure": increment.decisioning_endpoint.on_failure,
            "error": increment.program_error,
        },
    )


def _event_data(increment: AuthorizationIncrement) -> dict:
    data = {"increment_id": increment.pk, "increment_amount": increment.amount}
    if not increment.approved:
        data["increment_decline_code"] = increment.decline_code
    if increment.decided_by != AuthorizationIncrement.DecidedBy.TX:
        data["increment_decided_by"] = increment.decided_by
    return data
