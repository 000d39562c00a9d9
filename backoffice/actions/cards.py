"""What staff do to cards: activate, suspend and close them (docs/back-office.md, "Actions on a
page"), unblock their PIN and change their limits (four eyes); add and change card products
(docs/products.md).

A status change asks for a reason (required to suspend or close: activating a new card is
routine); the reason becomes the card's status reason, goes in its `card.status_changed` event
and in the admin history.

"Unblock the PIN" is the staff's way past the API's cap on PIN unblocks (two per card chain in
30 days, `cards.services.pin`): `card_pin_unblock` with the staff actor and the reason, recorded
(`PinUnblock`), logged and announced (`card.pin_changed`) like any other; at once within the
institution's threshold, else asked for (docs/back-office.md, "Four eyes").
"""

from django.contrib import messages

from backoffice.actions.base import (
    Confirmation,
    LeftOut,
    Move,
    Reason,
    StaffAction,
    said,
    status_actions,
)
from backoffice.actions.forms import FormWrite, changed_fields, created
from backoffice.actions.four_eyes import CARD_LIMITS_RAISE, PIN_UNBLOCK
from backoffice.forms import CARD_LIMIT_LABELS, CardLimitsForm, CardProtectionForm
from cards.models import Card, CardProduct
from cards.services import (
    card_limits_set,
    card_pin_unblock,
    card_product_create,
    card_product_update,
    card_set_status,
)
from cards.services.status import TRANSITIONS
from core.money import money

STATUS_REASON_HELP = (
    "Kept as each card's status reason, sent in its card.status_changed event and written in "
    "the admin history."
)

activate_cards, suspend_cards, close_cards = status_actions(
    model=Card,
    service=card_set_status,
    noun="card",
    moves=[
        Move(
            "activate_cards",
            "Activate selected cards (asks for a reason)",
            Card.Status.ACTIVE,
            "Activate",
            "Activated",
            Reason(required=False, help_text=STATUS_REASON_HELP),
        ),
        Move(
            "suspend_cards",
            "Suspend selected cards (asks for a reason)",
            Card.Status.SUSPENDED,
            "Suspend",
            "Suspended",
            Reason(help_text=STATUS_REASON_HELP),
        ),
        Move(
            "close_cards",
            "Close selected cards (final; asks for a reason)",
            Card.Status.CLOSED,
            "Close",
            "Closed",
            Reason(help_text=STATUS_REASON_HELP),
        ),
    ],
    arguments=lambda card, status, asked: {
        "card": card,
        "status": status,
        "reason": asked.reason,
    },
    template="admin/cards/card/status_confirmation.html",
    transitions=TRANSITIONS,
)


def _open(card: Card) -> bool:
    """A card not in a final status (closed, lost, stolen, expired: it moves nowhere)."""
    return bool(TRANSITIONS[card.status])


# --- Protecting a card: what every role, support included, may do (docs/back-office.md,
# "What support may do"). No money moves and no second person is asked: each needs the
# permission `cards.protect_card` (`CardAdmin.has_protect_permission`), a reason code and a
# reason, both written in the card.status_changed event and the admin history.
PROTECT = ("protect",)
Code = Card.StatusReasonCode
PROTECT_REASON_HELP = (
    "What the cardholder said, or what was seen. Kept as the card's status reason, sent in its "
    "card.status_changed event with the reason code, and written in the admin history."
)


def _protected(verb: str):
    """The history of a protective move: the status, the reason code and the reason."""

    def history(outcome, asked) -> str:
        code = Code(asked["reason_code"]).label
        return (
            f"Status {outcome.previous} → {outcome.value.status} (admin action “{verb}”; "
            f"reason code: {code}; {said(asked.reason)})."
        )

    return history


def _protect(name, label, verb, past, codes, status, summary, **more) -> StaffAction:
    """A protective move of cards to `status` (None: the reason code's, lost or stolen),
    asking for one of `codes` and a reason."""
    return StaffAction(
        name=name,
        label=label,
        model=Card,
        service=card_set_status,
        arguments=lambda card, asked: {
            "card": card,
            "status": status or asked["reason_code"],
            "reason": asked.reason,
            "reason_code": asked["reason_code"],
        },
        reason=Reason(help_text=PROTECT_REASON_HELP),
        form=lambda data, cards: CardProtectionForm(
            data, codes=codes, help_text=PROTECT_REASON_HELP
        ),
        confirmation=Confirmation(
            template="admin/cards/card/protect_confirmation.html",
            title=f"{verb}: cards",
            submit=f"{verb}: {{n}} card(s)",
            context={"summary": summary},
        ),
        verb=verb,
        history=_protected(verb),
        done=f"{past} {{n}} card(s).",
        permissions=PROTECT,
        **more,
    )


freeze_cards = _protect(
    "freeze_cards",
    "Freeze selected cards (suspend: payments are declined until unfrozen; asks for a reason code)",
    "Freeze",
    "Froze",
    [Code.CUSTOMER_REQUEST, Code.LOST, Code.STOLEN, Code.FRAUD_SUSPECTED, Code.OTHER],
    Card.Status.SUSPENDED,
    "Each card is suspended: every payment is declined until it is unfrozen. A card that is "
    "not active is reported and left as it is.",
    already="Already frozen, left as they were: {ids}.",
)
unfreeze_cards = _protect(
    "unfreeze_cards",
    "Unfreeze selected frozen cards (asks for a reason code)",
    "Unfreeze",
    "Unfroze",
    [Code.CUSTOMER_REQUEST, Code.CARD_FOUND, Code.FRAUD_RULED_OUT, Code.OTHER],
    Card.Status.ACTIVE,
    "Each frozen (suspended) card is active again: payments are authorized as before.",
    already="Already active, left as they were: {ids}.",
    # Unfreezing is not activating: a new card's first activation stays with "Activate".
    left_out=LeftOut(
        which=lambda card: card.status != Card.Status.SUSPENDED,
        said=lambda cards: [
            "Not frozen, left as they were: "
            + ", ".join(f"{card.pk} ({card.status})" for card in cards)
            + "."
        ],
        level=messages.WARNING,
    ),
)
block_cards = _protect(
    "block_cards",
    "Block selected cards as lost or stolen (final; asks for a reason code)",
    "Block",
    "Blocked",
    [Code.LOST, Code.STOLEN],
    None,
    "Each card becomes lost or stolen, as the reason code says: final, every payment is "
    "declined for good. The cardholder's new card is a replacement (POST "
    "/cards/{cardId}/replacements, with its fee), ordered by the institution.",
    already="Already blocked so, left as they were: {ids}.",
)

# The customer page's buttons of each card (`backoffice.admin.customers`): the protective
# action, its button and the statuses it is offered on.
PROTECTIVE_BUTTONS = [
    (freeze_cards, "Freeze", {Card.Status.ACTIVE}),
    (unfreeze_cards, "Unfreeze", {Card.Status.SUSPENDED}),
    (block_cards, "Block (lost or stolen)", {Card.Status.ACTIVE, Card.Status.SUSPENDED}),
]

unblock_pins = StaffAction(
    name="unblock_pins",
    label="Unblock the PIN of selected cards (asks for a reason; above the threshold another "
    "staff user approves)",
    model=Card,
    service=card_pin_unblock,
    four_eyes=PIN_UNBLOCK,
    arguments=lambda card, asked: {"card": card, "reason": asked.reason},
    reason=Reason(
        help_text="Why staff unblock this PIN (e.g. the cardholder's identity checked by phone). "
        "Kept with the unblock and written in the admin history."
    ),
    confirmation=Confirmation(
        template="admin/cards/card/pin_unblock_confirmation.html",
        title="Unblock PINs",
        submit="Unblock the PIN of {n} card(s)",
    ),
    verb="Unblock PIN",
    made=lambda card, asked: "PIN unblocked",
    already="PIN not blocked, left as it was: {ids}.",
    applies=lambda card, user: card.pin_blocked and _open(card),
)


def _limits(asked) -> dict:
    """The four limits asked for, in minor units of the card's account currency."""
    return {field: asked[field] for field in CARD_LIMIT_LABELS}


def _limits_set(card: Card, asked) -> str:
    currency = card.account.currency
    words = ", ".join(
        f"{CARD_LIMIT_LABELS[field].lower()} {money(value, currency)}"
        for field, value in _limits(asked).items()
        if value != getattr(card, field)
    )
    return f"Limits set: {words}"


change_limits = StaffAction(
    name="change_limits",
    label="Change the limits (a raise above the threshold: another staff user approves)",
    model=Card,
    service=card_limits_set,
    # Lower limits are set at once; a change that raises any limit is one request for the whole
    # change, unless within the threshold.
    four_eyes=CARD_LIMITS_RAISE,
    arguments=lambda card, asked: {
        "card": card,
        "changes": _limits(asked),
        "reason": asked.reason,
    },
    # The four limits, shown as they are, in the card's account currency, and the reason.
    reason=Reason(),
    form=lambda data, cards: CardLimitsForm(
        data, card=cards[0], currency=cards[0].account.currency
    ),
    confirmation=Confirmation(
        template="admin/cards/card/limits_change.html",
        title="Change the card's limits",
        submit="Set the limits, or ask for approval",
    ),
    one="card to change the limits of",
    verb="Change the limits",
    made=_limits_set,
    already="The limits are those already: {ids}.",
    applies=lambda card, user: _open(card),
)


# --- Card products: their forms write through the products' services -----------------------
# As the API's v2 does: `product.created`, `product.updated` name the staff user.
add_card_product = FormWrite(
    page="add form", model=CardProduct, service=card_product_create, arguments=created
)
change_card_product = FormWrite(
    page="change form",
    model=CardProduct,
    service=card_product_update,
    arguments=lambda saving: {"product": saving.obj, "changes": changed_fields(saving)},
)
