"""What the network does not ask (docs/card-transactions.md, "Messages the network does not
ask"): an **advice** (an authorization the network approved in stand-in while the issuer could
not answer) and a **force post** (a presentment with no live authorization: its authorization
expired or was reversed, or there never was one). The network has already paid the merchant:
neither is declined, neither asks the program.

Both are recorded as approved authorizations, `decidedBy: network`, and held (an advice) or held
and presented at once (a force post) on the card's account whatever it has available: the
posting is `accounts.posting.FORCED`. What that takes the account below zero available is the
authorization's `overdrawn_by` (the flag) and raises the account's `network_overdraft`, the
shortfall PostgreSQL allows until it is paid back. The card's usage counts the amount (no limit
is checked), monitoring rules are screened and raise their alerts (none declines), the statement
line and the events are an approval's. Refused, with nothing written: a closed account (422
`account_not_active`), another currency than the account's (422 `currency_mismatch`).
"""

from django.db import transaction

from accounts.locks import lock_accounts
from accounts.models import Hold
from accounts.services import hold_place
from cards.dates import today_of
from cards.models import Card
from cards.services import count_payment, lock_card
from core.actors import Actor
from core.metadata import metadata_check
from core.rows import new_row
from monitoring.services import screen

from ..models import Authorization
from .authorize import authorization_approved, hold_expiry, raise_alerts
from .clearing import authorization_present
from .currency import foreign_amount_check


def authorization_record_network(
    *,
    kind: str,
    card: Card,
    amount: int,
    currency: str,
    type: str,
    merchant: dict,
    actor: Actor,
    metadata: dict | None = None,
    merchant_amount: int | None = None,
    merchant_currency: str | None = None,
) -> Authorization:
    """Record an advice (`kind` advice: approved and held) or a force post (`kind`
    force_post: approved, held and presented for `amount` in the same transaction) of
    `amount` on `card` at `merchant`, whatever the card and its account allow (see the
    module docstring)."""
    if kind not in (Authorization.Kind.ADVICE, Authorization.Kind.FORCE_POST):
        raise ValueError(f"Not a message the network does not ask: {kind!r}")
    metadata = metadata_check(metadata or {})
    foreign = foreign_amount_check(
        amount=amount,
        currency=currency,
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
    )
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        account = lock_accounts([card.account_id])[card.account_id]
        authorization = new_row(
            Authorization,
            institution_id=card.institution_id,
            card=card,
            account=account,
            kind=kind,
            type=type,
            amount=amount,
            currency=currency,
            **Authorization.merchant_fields(merchant),
            decision=Authorization.Decision.APPROVED,
            decided_by=Authorization.DecidedBy.NETWORK,
            # What the account did not have: its available balance, or nothing once below zero.
            overdrawn_by=max(amount - max(account.available, 0), 0),
            metadata=metadata,
            **(foreign.fields() if foreign else {}),
            **actor.stamp("created_by"),
        )
        authorization.decided_at = authorization.created_at
        # Refused before anything else is written: another currency, a closed account.
        authorization.hold = hold_place(
            account=account,
            amount=amount,
            currency=currency,
            expires_at=hold_expiry(),
            reason=f"{type} at {merchant['name']}",
            actor=actor,
            purpose=Hold.Purpose.CARD_AUTHORIZATION,
            forced=True,
        )
        screening = screen(card=card, amount=amount, currency=currency, merchant=merchant)
        authorization.spend_day = today_of(card.institution)
        count_payment(
            card,
            authorization.spend_day,
            amount,
            currency=currency,
            cash=type == Authorization.Type.CASH,
        )
        authorization.save(force_insert=True)
        raise_alerts(screening, authorization, merchant)
        authorization_approved(authorization)
        if kind == Authorization.Kind.FORCE_POST:
            authorization = authorization_present(
                authorization=authorization, actor=actor, forced=True
            )
    return authorization
