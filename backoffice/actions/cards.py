"""What staff do to cards: activate, suspend and close them (docs/back-office.md, "Actions on a
page"), unblock their PIN (four eyes).

A status change asks for a reason (required to suspend or close: activating a new card is
routine); the reason becomes the card's status reason, goes in its `card.status_changed` event
and in the admin history.

"Unblock the PIN" is the staff's way past the API's cap on PIN unblocks (two per card chain in
30 days, `cards.services.pin`): `card_pin_unblock` with the staff actor and the reason, recorded
(`PinUnblock`), logged and announced (`card.pin_changed`) like any other; at once within the
institution's threshold, else asked for (docs/back-office.md, "Four eyes").
"""

from backoffice.actions.base import Confirmation, Move, Reason, StaffAction, status_actions
from backoffice.actions.four_eyes import PIN_UNBLOCK
from cards.models import Card
from cards.services import card_pin_unblock, card_set_status

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
)

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
)
