"""Renewals, reissues and replacements (docs/design.md section 8). Each makes a new card that links
to the old one (`predecessor` / `successor`) and carries over its controls, limits, risk level and
PIN.

| operation   | PAN  | expiry | CVV  | new card's status       | old card becomes              |
|-------------|------|--------|------|-------------------------|-------------------------------|
| renewal     | same | new    | new  | the old one's if live   | closed ("renewed")            |
| reissue     | same | same   | same | the old one's           | closed ("reissued")           |
| replacement | new  | new    | new  | inactive                | lost / stolen / closed        |

A renewal's expiry is the later of the old expiry and the current month, plus the product's
validity. One live card holds a PAN at a time, so the old card is closed in the same
transaction. An old card already lost, stolen or expired keeps its status.
"""

from django.db import transaction

from accounts.models import Account, Fee
from accounts.services import fee_charge
from core.exceptions import AccountNotActive, InvalidStateTransition, ValidationFailed

from ..dates import add_months, today_of
from ..locks import lock_card
from ..models import Card, CardProduct
from ..secrets import new_cvv
from .issuance import emit_issued, new_card
from .status import change_status

S = Card.Status
RENEWABLE = (S.INACTIVE, S.ACTIVE, S.SUSPENDED, S.EXPIRED)
REISSUABLE = (S.INACTIVE, S.ACTIVE, S.SUSPENDED)
REPLACEABLE = (S.INACTIVE, S.ACTIVE, S.SUSPENDED, S.LOST, S.STOLEN)
# replacement reason -> what the old card becomes
REPLACEMENT_REASONS = {
    "lost": S.LOST,
    "stolen": S.STOLEN,
    "damaged": S.CLOSED,
    "compromised": S.CLOSED,
}
REPLACEMENT_REASON_CHOICES = list(REPLACEMENT_REASONS)

# Carried over to every successor.
CARRIED = [
    "institution_id",
    "product_id",
    "account_id",
    "customer_id",
    "primary_card_id",
    "form",
    "risk_level",
    "embossed_name",
    "delivery_line1",
    "delivery_line2",
    "delivery_city",
    "delivery_postal_code",
    "delivery_country_code",
    "ecommerce",
    "contactless",
    "atm",
    "international",
    "magstripe",
    "blocked_mccs",
    "blocked_countries",
    "limit_per_transaction",
    "limit_daily",
    "limit_monthly",
    "limit_daily_cash",
    "pin_hash",
    "pin_failed_attempts",
    "pin_blocked",
    "pin_changed_at",
]


def card_renew(*, card: Card, delivery_address: dict | None = None) -> Card:
    """Same PAN, new expiry and CVV. Emits `card.renewed` (and the old card's status change)."""
    with transaction.atomic(savepoint=False):
        old = _lock_for(card, RENEWABLE, "renewed")
        _check_delivery(old, delivery_address)
        today = today_of(old.institution)
        base = max((old.expiry_year, old.expiry_month), (today.year, today.month))
        successor = _successor(old, Card.Succession.RENEWAL, delivery_address)
        successor.status = old.status if old.is_live else S.INACTIVE
        successor.set_expiry(*add_months(*base, old.product.validity_months))
        pan, cvv = old.pan(), old.cvv()
        # The old card gives up the PAN first: one live card per PAN (card_live_pan_unique).
        _retire(old, S.CLOSED, "renewed")
        new_card(successor, pan=pan, cvv=_different_cvv(cvv))
        emit_issued(successor, "card.renewed", predecessorCardId=old.pk)
    return successor


def card_reissue(
    *,
    card: Card,
    embossed_name: str | None = None,
    delivery_address: dict | None = None,
    reason: str = "",
) -> Card:
    """Same PAN, expiry and CVV on a new plastic (a damaged card, a name change). Physical
    cards only (400 for a virtual one). Emits `card.reissued`."""
    with transaction.atomic(savepoint=False):
        old = _lock_for(card, REISSUABLE, "reissued")
        if old.form != CardProduct.Form.PHYSICAL:
            raise ValidationFailed(
                "A virtual card has no plastic to reissue.", details={"form": old.form}
            )
        successor = _successor(old, Card.Succession.REISSUE, delivery_address)
        successor.status = old.status
        if embossed_name:
            successor.embossed_name = embossed_name
        successor.set_expiry(old.expiry_year, old.expiry_month)
        pan, cvv = old.pan(), old.cvv()
        # The old card gives up the PAN first: one live card per PAN (card_live_pan_unique).
        _retire(old, S.CLOSED, f"reissued: {reason}" if reason else "reissued")
        new_card(successor, pan=pan, cvv=cvv)
        emit_issued(successor, "card.reissued", predecessorCardId=old.pk, reason=reason)
    return successor


def card_replace(*, card: Card, reason: str, delivery_address: dict | None = None) -> Card:
    """A new PAN, expiry and CVV, issued inactive; the old card becomes lost, stolen or closed
    per `reason` (unless it already is lost or stolen). Emits `card.replaced`; charges the
    product's `replacement_fee` (`fee.charged`, or `fee.declined` when the account cannot pay)."""
    if reason not in REPLACEMENT_REASONS:
        raise ValueError(f"unknown replacement reason {reason!r}")
    with transaction.atomic(savepoint=False):
        old = _lock_for(card, REPLACEABLE, REPLACEMENT_REASONS[reason])
        _check_delivery(old, delivery_address)
        today = today_of(old.institution)
        successor = _successor(old, Card.Succession.REPLACEMENT, delivery_address)
        successor.status = S.INACTIVE
        successor.set_expiry(*add_months(today.year, today.month, old.product.validity_months))
        new_card(successor)
        _retire(old, REPLACEMENT_REASONS[reason], f"replaced: {reason}")
        emit_issued(successor, "card.replaced", predecessorCardId=old.pk, reason=reason)
        # The product's replacement fee, on the card replaced (docs/fees.md): declined, not
        # deferred, when the account cannot pay it; the replacement goes on.
        fee_charge(
            account=old.account,
            kind=Fee.Kind.REPLACEMENT,
            amount=old.product.replacement_fee,
            card=old,
        )
    return successor


def _lock_for(card: Card, allowed: tuple, to_state: str) -> Card:
    old = lock_card(card.pk)
    if old.status not in allowed:
        raise InvalidStateTransition(
            f"A {old.status} card cannot be {to_state}.", from_state=old.status, to_state=to_state
        )
    successor_id = Card.objects.filter(predecessor=old).values_list("pk", flat=True).first()
    if successor_id:
        error = InvalidStateTransition(
            "This card already has a successor.", from_state=old.status, to_state=to_state
        )
        error.details["successor_card_id"] = successor_id
        raise error
    account_status = Account.objects.values_list("status", flat=True).get(pk=old.account_id)
    if account_status == Account.Status.CLOSED:
        raise AccountNotActive(
            "The card's account is closed.",
            details={"account_id": old.account_id, "status": account_status},
        )
    return old


def _check_delivery(old: Card, delivery_address: dict | None) -> None:
    if delivery_address and old.form != CardProduct.Form.PHYSICAL:
        raise ValidationFailed(
            details={"delivery_address": "A virtual card is not delivered: leave this out."}
        )


def _successor(old: Card, succession: str, delivery_address: dict | None) -> Card:
    card = Card(predecessor=old, succession=succession, lineage_id=old.lineage_root_id)
    for field in CARRIED:
        setattr(card, field, getattr(old, field))
    card.blocked_mccs = list(old.blocked_mccs)
    card.blocked_countries = list(old.blocked_countries)
    card.metadata = dict(old.metadata)  # the client's metadata follows the card (docs/metadata.md)
    if delivery_address:
        card.set_delivery_address(delivery_address)
    return card


def _retire(old: Card, status: str, reason: str) -> None:
    if old.is_live:
        change_status(old, status, reason)


def _different_cvv(cvv: str) -> str:
    while (fresh := new_cvv()) == cvv:
        pass
    return fresh
