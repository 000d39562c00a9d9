"""Merchant returns (refunds): the money comes back at once, from the institution's card
clearing account, as a `Return` line that is `Presentment` from the start.

A return may name the authorization it refunds: then that authorization must be presented, on
the same card, and its returns and disputes add up to at most the presented amount (422
`amount_exceeds_remaining`; the authorization's `returned_amount` and `disputed_amount`, a
CHECK of PostgreSQL's: docs/disputes.md). Without one it is a standalone refund. The card's
status does not matter (a refund reaches a closed card's account); the account must not be
closed (422 `account_not_active`) and must be in the return's currency (422
`currency_mismatch`).

A refund of a payment its just-in-time program funded goes back to the program's funding
account (`funding.program_funding_follow`); a standalone refund stays with the cardholder, as a
load does.
"""

from django.db import transaction

from accounts.models import Account, Journal, StatementLine
from accounts.posting import credit, debit, journal_new, post
from accounts.services import internal_account
from accounts.statement_lines import Line, statement_lines_new
from cards.models import Card
from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition, ValidationFailed
from core.rows import new_row
from events.services import event_for

from ..locks import lock_authorization
from ..models import Authorization, CardReturn
from .funding import program_funding_follow


def card_return_create(
    *,
    card: Card,
    amount: int,
    currency: str,
    merchant: dict,
    authorization: Authorization | None = None,
    actor: Actor,
) -> CardReturn:
    """Credit `amount` to the card's account as a merchant refund. Emits
    `transaction.settled`."""
    with transaction.atomic(savepoint=False):
        if authorization is not None:
            authorization = _check_refundable(authorization, card, amount)
        clearing = internal_account(
            institution=card.institution,
            code=Account.InternalCode.CARD_CLEARING,
            currency=currency,
        )
        account = card.account
        journal = journal_new(
            institution_id=card.institution_id,
            kind=Journal.Kind.CARD_RETURN,
            description=f"Return from {merchant['name']}",
        )
        card_return = new_row(
            CardReturn,
            institution=card.institution,
            card=card,
            account=account,
            authorization=authorization,
            amount=amount,
            currency=currency,
            journal=journal,
            **CardReturn.merchant_fields(merchant),
            **actor.stamp("created_by"),
        )
        [line] = statement_lines_new(
            lines=[Line(account, StatementLine.Type.RETURN, amount, merchant["name"], card=card)],
            currency=currency,
            journal=journal,
            card_return=card_return,
            merchant=card_return.merchant,
        )
        post(
            institution_id=card.institution_id,
            currency=currency,
            moves=[credit(account.pk, amount), debit(clearing.pk, amount, check="")],
            journal=journal,
            rows=[card_return],
            lines=[line],
            events=[
                event_for(
                    line,
                    "transaction.settled",
                    data={
                        "return_id": card_return.pk,
                        "authorization_id": authorization.pk if authorization else None,
                        "card_id": card.pk,
                        "account_id": account.pk,
                        "type": StatementLine.Type.RETURN,
                        "amount": amount,
                        "currency": currency,
                    },
                    institution=card.institution,
                )
            ],
        )
        if authorization is not None:
            # A refund of a payment its JIT program funded goes back to the program.
            program_funding_follow(authorization)
    return card_return


def _check_refundable(authorization: Authorization, card: Card, amount: int) -> Authorization:
    """The authorization, locked, with `amount` more returned (refused when it may not be)."""
    authorization = lock_authorization(authorization.pk, "hold", "card", "account__institution")
    if authorization.card_id != card.pk:
        raise ValidationFailed(details={"authorization_id": "An authorization of another card."})
    if authorization.status != Authorization.Status.PRESENTED:
        raise InvalidStateTransition(
            f"Only a presented authorization can be refunded; this one is {authorization.status}.",
            from_state=authorization.status,
            to_state="returned",
        )
    remaining = (
        authorization.presented_amount
        - authorization.returned_amount
        - authorization.disputed_amount
    )
    if amount > remaining:
        raise AmountExceedsRemaining(details={"amount": amount, "remaining": remaining})
    # Counted on its row: PostgreSQL refuses more than was presented, disputes included.
    authorization.returned_amount += amount
    authorization.save(update_fields=["returned_amount"])
    return authorization
