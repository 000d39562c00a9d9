"""Issuing a supplementary card while its primary card pays, in real threads with their own
connections and committed transactions (docs/money.md, "Locking": a card before its account)."""

import pytest

from accounts.models import Account
from cards.models import Card
from tests.accounts.ledger.test_concurrency import held_while_blocked

from .helpers import fresh_card, issue_card, make_account, make_customer, make_institution

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_supplementary_card_locks_its_primary_card_before_the_account():
    """A payment on the primary card locks the card, then the account. The issuance locked the
    account only, and the new card's reference to its primary card is checked at commit (FOR
    KEY SHARE), which waits for the payment's lock on that card: the payment waiting for the
    account, a deadlock. Here the test holds the primary card as a payment does; while the
    issuance waits for it, the issuance must hold no account."""
    fi = make_institution()
    account = make_account(fi)
    primary = issue_card(account)
    partner = make_customer(fi, "Grace", "Hopper")
    issued = []

    probe = held_while_blocked(
        lambda: issued.append(issue_card(account, customer=partner, primary_card=primary)),
        (Card, primary.pk),
    )

    assert probe({"account": (Account, account.pk)}) == {"account": False}
    assert [fresh_card(card).primary_card_id for card in issued] == [primary.pk]
