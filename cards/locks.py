"""The row locks of cards (docs/design.md section 2). A card is locked before its account (the
order of every lock of the domain: docs/money.md, "Locking", and `accounts.locks`).

Only the card row, never the institution read with it: a bare FOR UPDATE would lock the joined
institution too, blocking every write that references it (deferred foreign-key checks take FOR
KEY SHARE at commit) and deadlocking with one that holds an account a card payment then locks.
"""

from django.db.models import QuerySet

from .models import Card


def lock_card(card_id: str) -> Card:
    """The card, its row locked until the transaction ends, with its institution."""
    return (
        Card.objects.select_for_update(of=("self",)).select_related("institution").get(pk=card_id)
    )


def cards_skip_locked() -> QuerySet:
    """Cards locked as they are read, skipping those locked elsewhere (the expiry and renewal
    jobs: a card another transaction holds is left to it), with their institution."""
    return Card.objects.select_for_update(skip_locked=True, of=("self",)).select_related(
        "institution"
    )
