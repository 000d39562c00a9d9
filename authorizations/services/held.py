"""What an approved authorization holds and counts, changed after its decision: its hold
replaced (a hold's amount never changes: PostgreSQL refuses it, `tx_hold_changed`), released,
its `Unsettled` statement line, and the card's usage given back. One place for the decision
(`authorize`, `program`) and the clearing (`clearing`), which all change them the same way."""

from accounts.models import Hold, StatementLine
from accounts.services import hold_place, hold_release
from accounts.statement_lines import Line, statement_lines_record
from cards.services import unspend
from core.actors import current_actor

from ..models import Authorization
from .funding import program_funding_follow


def hold_again(authorization: Authorization, held: Hold, amount: int, forced: bool = False) -> Hold:
    """A new hold of `amount` on the authorization's account, as `held` was (its expiry and
    reason), to take its place; the caller has released or captured `held`.

    A hold of no more than `held` (the rest of a presentment that is not final, a partial
    approval) holds what was the authorization's already: it is placed whatever is available
    (`forced`), as the network's own messages are, so an account the network has taken below
    zero since (docs/card-transactions.md) keeps its authorization's rest held. Releasing
    `held` lowered the account's `network_overdraft` to what was still below zero; the new hold
    raises it back to what it was at most, never beyond. A larger one (an increment) needs the
    whole `amount` available after the release, as any new hold, unless `forced` (a JIT
    program's `on_failure: approve`)."""
    return hold_place(
        account=authorization.account,
        amount=amount,
        currency=held.currency,
        expires_at=held.expires_at,
        reason=held.reason,
        actor=current_actor(),
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        forced=forced or amount <= held.amount,
    )


def release(authorization: Authorization) -> None:
    """Release its hold and give what it held back to the card's limits, and to its JIT
    program what it funded for it (`funding.program_funding_follow`)."""
    authorization.hold = hold_release(
        hold=authorization.hold, purpose=Hold.Purpose.CARD_AUTHORIZATION
    )
    give_back(authorization, authorization.hold.amount)
    program_funding_follow(authorization)


def give_back(authorization: Authorization, amount: int) -> None:
    """`amount` of the authorization no longer counts against the card's limits."""
    unspend(
        authorization.card,
        authorization.spend_day,
        amount,
        cash=authorization.type == Authorization.Type.CASH,
    )


def unsettled_line(authorization: Authorization, hold: Hold, amount: int, **fields) -> None:
    """The `Unsettled` statement line of `amount` held by `hold` (`fields`: the line's foreign
    amount, `currency.foreign_line_fields`)."""
    statement_lines_record(
        lines=[
            Line(
                authorization.account,
                authorization.type,
                amount,
                authorization.merchant_name,
                settlement_status=StatementLine.SettlementStatus.UNSETTLED,
                card=authorization.card,
            )
        ],
        currency=authorization.currency,
        hold=hold,
        authorization=authorization,
        merchant=authorization.merchant,
        **fields,
    )
