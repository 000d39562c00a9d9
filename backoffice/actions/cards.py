"""What staff do to cards: activate, suspend and close them (docs/back-office.md, "Actions on a
page").

Each asks for a reason (required to suspend or close: activating a new card is routine); the
reason becomes the card's status reason, goes in its `card.status_changed` event and in the
admin history.
"""

from backoffice.actions.base import Move, Reason, status_actions
from cards.models import Card
from cards.services import card_set_status

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
