"""After the decision: presentment (clearing), reversal, expiry of approved authorizations.

- **Presentment** captures the hold into the institution's card-clearing account and turns the
  statement line `Presentment` (amount and journal of the presentment). The amount defaults to
  the authorized one; it may be lower (the rest is released) or higher by at most
  OVER_PRESENTMENT_PERCENT percent (tips, fuel), and then only with the difference available
  on the account (422 `insufficient_funds`); above that, 422 `amount_exceeds_remaining`. A
  presentment that is not final (v2 `final: false`, a split shipment) clears part and keeps the
  rest held for the next ones (a new hold of the rest, with its own `Unsettled` line); the
  final one releases what is left. The card's usage follows the presented amount in all. The card
  product's ATM and foreign-transaction fees follow it (docs/fees.md). A foreign-currency
  line presented for another amount than authorized drops its merchant amount (not known).
- **Reversal** releases the hold (what is still held) and gives that back to the card's limits;
  what earlier presentments cleared stays.
- **Expiry**: an authorization not presented within AUTHORIZATION_HOLD_DAYS is released by the
  expiry job (`expire_holds`) and its usage given back; its line stays `Unsettled`, `expired`.

Anything but a pending authorization is 409 `invalid_state_transition`.
"""

from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts, lock_hold
from accounts.models import Account, Fee, Hold, StatementLine
from accounts.services import (
    fee_charge,
    hold_capture,
    holds_expire,
    internal_account,
)
from accounts.services.fees import basis_points_of
from accounts.services.program_funding import ProgramFundsShort
from cards.services import spend_more
from core.actors import Actor
from core.exceptions import (
    AmountExceedsRemaining,
    InsufficientFunds,
    InvalidStateTransition,
    ValidationFailed,
)
from events.services import emit_for

from ..locks import lock_authorization
from ..models import Authorization, AuthorizationIncrement
from .currency import is_foreign_currency
from .funding import is_program_funded, program_funding_add, program_funding_follow
from .held import give_back, hold_again, release, unsettled_line

OVER_PRESENTMENT_PERCENT = 20


def authorization_present(
    *,
    authorization: Authorization,
    amount: int | None = None,
    final: bool = True,
    actor: Actor,
    forced: bool = False,
) -> Authorization:
    """Clear a pending authorization for `amount`. Final (the default): the last presentment,
    `amount` by default what is still held, at most OVER_PRESENTMENT_PERCENT above the
    authorized amount in all; the rest is released and the card's usage follows what was
    presented in all. Not final (a split shipment): `amount` (required) below what is still
    held is captured, and the rest stays held for the next presentments, by a new hold (a hold's
    amount never changes) with its own `Unsettled` line; the authorization stays `pending`.
    Emits `transaction.settled` (`final`). `forced`: a force post's own presentment
    (`network.authorization_record_network`), captured whatever the account has."""
    with transaction.atomic(savepoint=False):
        authorization = lock_pending(authorization, Authorization.Status.PRESENTED)
        held = authorization.hold
        already = authorization.presented_amount or 0
        if not final:
            if amount is None:
                raise ValidationFailed(
                    details={"amount": "A presentment that is not final names its amount."}
                )
            if amount >= held.amount:
                raise AmountExceedsRemaining(
                    "A presentment that is not final leaves part of the hold: present the "
                    "rest as final.",
                    details={"amount": amount, "held": held.amount},
                )
        amount = held.amount if amount is None else amount
        fees = _fees(authorization, already + amount if final else None)
        if fees:
            _lock_accounts_with_fees(authorization)
        if amount > held.amount and is_program_funded(authorization):
            _fund_beyond_the_hold(authorization, amount - held.amount)
        hold = hold_capture(
            hold=held,
            amount=amount,
            purpose=Hold.Purpose.CARD_AUTHORIZATION,
            counterparty=Account.InternalCode.CARD_CLEARING,
            max_amount=(
                held.amount
                if not final
                else authorization.amount * (100 + OVER_PRESENTMENT_PERCENT) // 100 - already
            ),
            statement_line=False,
            forced=forced,
        )
        line = _line_presented(hold, amount)
        presented = already + amount
        if final:
            _usage_follows(authorization, presented)
            authorization.hold = hold
        else:
            authorization.hold = _hold_the_rest(authorization, held, held.amount - amount)
        authorization.presented_amount = presented
        authorization.presented_at = authorization.updated_at = timezone.now()
        authorization.save(update_fields=["hold", "presented_amount", "presented_at", "updated_at"])
        program_funding_follow(authorization)  # a final presentment below the hold
        emit_for(
            line,
            "transaction.settled",
            data={
                "authorization_id": authorization.pk,
                "card_id": authorization.card_id,
                "account_id": authorization.account_id,
                "type": line.type,
                "amount": amount,
                "authorized_amount": authorization.amount,
                "currency": authorization.currency,
                **({} if final else {"final": False, "still_held": authorization.hold.amount}),
            },
            institution=authorization.card.institution,
        )
        _charge_fees(authorization, fees)
    return authorization


def _fund_beyond_the_hold(authorization: Authorization, beyond: int) -> None:
    """A presentment above what a JIT program's authorization holds (a tip, fuel): the program
    funds the difference too, before the capture needs it (422 `insufficient_funds` when its
    funding account cannot). The payment's accounts are locked first, the funding account
    last, as on every path (`accounts.services.program_funding`)."""
    clearing = internal_account(
        institution=authorization.card.institution,
        code=Account.InternalCode.CARD_CLEARING,
        currency=authorization.currency,
    )
    lock_accounts([authorization.account_id, clearing.pk])
    try:
        program_funding_add(authorization, beyond)
    except ProgramFundsShort as short:
        raise InsufficientFunds(
            "The card program's funding account cannot pay this presentment's amount above "
            "the authorization.",
            details={"available": short.available, "amount": short.amount},
        ) from None


def _line_presented(hold: Hold, amount: int) -> StatementLine:
    """The captured hold's `Unsettled` line becomes the presentment's (`Presentment`, its
    amount and journal)."""
    line = StatementLine.objects.get(hold=hold)
    line.settlement_status = StatementLine.SettlementStatus.PRESENTMENT
    line.journal = hold.capture_journal
    if amount != line.amount and line.merchant_amount is not None:
        # The presentment carries only the billing amount: what the merchant charged for
        # another amount is not known, so the line no longer claims the authorized one.
        line.merchant_amount = line.merchant_currency = None
    line.amount = amount
    line.save(
        update_fields=[
            "settlement_status",
            "amount",
            "journal",
            "merchant_amount",
            "merchant_currency",
        ]
    )
    return line


def _hold_the_rest(authorization: Authorization, held: Hold, rest: int) -> Hold:
    """What a presentment that is not final leaves held: a new hold (the captured one released
    the rest; the account has it available again), with an `Unsettled` line of its own."""
    hold = hold_again(authorization, held, rest)
    unsettled_line(authorization, hold, rest)
    return hold


def _usage_follows(authorization: Authorization, presented: int) -> None:
    """The card's usage after the final presentment: what was presented in all, where it
    counted what was authorized."""
    if presented < authorization.amount:
        give_back(authorization, authorization.amount - presented)
    elif presented > authorization.amount:
        spend_more(
            authorization.card,
            authorization.spend_day,
            presented - authorization.amount,
            cash=authorization.type == Authorization.Type.CASH,
        )


def _fees(authorization: Authorization, presented: int | None) -> list[tuple[str, int]]:
    """The card product's fees that follow a presentment (docs/fees.md), as (kind, amount),
    those of 0 left out; one of a kind per authorization (`fee_once_per_authorization`):
    `atm_fee` for a `Cash` authorization, at its first presentment; at the final one
    (`presented`: what all its presentments cleared, None before), `foreign_transaction_fee_bps`
    of that (half up) when the merchant's country is not the cardholder's or the merchant
    charged in another currency than the account's (`currency.is_foreign_currency`, e.g.
    dynamic currency conversion at home): one fee either way, never two."""
    card = authorization.card
    product = card.product
    fees = []
    if authorization.type == Authorization.Type.CASH and authorization.presented_amount is None:
        fees.append((Fee.Kind.ATM, product.atm_fee))
    abroad = authorization.merchant_country != card.customer.country_code
    if presented is not None and (abroad or is_foreign_currency(authorization)):
        fees.append(
            (
                Fee.Kind.FOREIGN_TRANSACTION,
                basis_points_of(presented, product.foreign_transaction_fee_bps),
            )
        )
    return [(kind, fee) for kind, fee in fees if fee > 0]


def _lock_accounts_with_fees(authorization: Authorization) -> None:
    """A presentment with fees posts on the customer's and the card-clearing account (the
    capture), then on the customer's and the fees account (each fee). Its hold, then the three
    accounts at once, by id (docs/money.md, "Locking"): locked by each posting, the fees account
    came last, out of the id order when it is the older, and a fee charged or waived meanwhile
    on the customer's account (the fees account, then that account) deadlocked with it."""
    institution = authorization.card.institution
    internal = [
        internal_account(institution=institution, code=code, currency=authorization.currency)
        for code in (Account.InternalCode.CARD_CLEARING, Account.InternalCode.FEES)
    ]
    lock_hold(authorization.hold_id)
    lock_accounts([authorization.account_id, *(account.pk for account in internal)])


def _charge_fees(authorization: Authorization, fees: list[tuple[str, int]]) -> None:
    """The presentment's `fees` (`_fees`), each its own journal after the payment's. A fee the
    account cannot pay is declined; the presentment stands."""
    if not fees:
        return
    account = Account.objects.select_related("institution").get(pk=authorization.account_id)
    for kind, amount in fees:
        fee_charge(
            account=account,
            kind=kind,
            amount=amount,
            card=authorization.card,
            authorization=authorization,
        )


def authorization_reverse(*, authorization: Authorization, actor: Actor) -> Authorization:
    """Release a pending authorization's hold and give its amount back to the card's limits.
    Emits `hold.released` and `authorization.reversed`."""
    with transaction.atomic(savepoint=False):
        authorization = lock_pending(authorization, Authorization.Status.REVERSED)
        release(authorization)
        authorization.updated_at = timezone.now()
        authorization.save(update_fields=["updated_at"])
        _emit(authorization, "authorization.reversed")
    return authorization


def authorizations_expire(*, now=None, batch_size: int = 500) -> int:
    """Expire the holds of authorizations not presented in time (the expiry job); return how
    many. Safe to run from several processes at once (`holds_expire`)."""
    return holds_expire(
        now=now,
        batch_size=batch_size,
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        on_expired=_expired,
    )


def _expired(hold: Hold) -> None:
    authorization = Authorization.objects.select_related(
        "card__institution", "account__institution", "hold"
    ).get(hold=hold)
    give_back(authorization, hold.amount)
    program_funding_follow(authorization)
    _emit(authorization, "authorization.expired")


def lock_pending(authorization: Authorization, to_state: str) -> Authorization:
    """The authorization's row, locked first (the operation's own row, `accounts.locks`); 409
    `invalid_state_transition` to `to_state` unless it is pending and no increment of it awaits
    its program (that increment's decision changes its hold: the network retries once it is
    decided, within seconds)."""
    locked = lock_authorization(authorization.pk, "hold", "card__institution")
    if locked.status != Authorization.Status.PENDING:
        raise InvalidStateTransition(
            f"A {locked.status} authorization cannot be {to_state}.",
            from_state=locked.status,
            to_state=to_state,
        )
    if locked.increments.filter(decision=AuthorizationIncrement.Decision.AWAITING_PROGRAM).exists():
        raise InvalidStateTransition(
            f"An increment of this authorization awaits its program: it cannot be {to_state} "
            "until that is decided.",
            from_state=Authorization.Status.AWAITING_PROGRAM,
            to_state=to_state,
        )
    return locked


def _emit(authorization: Authorization, event_type: str) -> None:
    emit_for(
        authorization,
        event_type,
        data={
            "card_id": authorization.card_id,
            "account_id": authorization.account_id,
            "amount": authorization.amount,
            "currency": authorization.currency,
        },
        institution=authorization.card.institution,
    )
