"""A presentment that charges a fee, in real threads with their own connections and committed
transactions (docs/money.md, "Locking": an operation's accounts at once, by id)."""

import pytest

from accounts.models import Account
from accounts.services import internal_account
from authorizations.models import Authorization
from authorizations.services import authorization_present
from core.actors import SYSTEM
from tests.accounts.api.test_fees import set_card_fees
from tests.accounts.ledger.test_concurrency import held_while_blocked
from tests.cards.api.helpers import institution_of

from .helpers import ATM, approved, funded

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_presentment_with_a_fee_locks_its_accounts_at_once_by_id(api_v2):
    """The capture posts on the customer's and the card-clearing account, then the ATM fee on
    the customer's and the fees account. Locked by each posting, the fees account came after
    the customer's, out of the id order when it is the older: a fee waived or charged on that
    account meanwhile (the fees account, then the customer's) waited for the presentment while
    the presentment waited for it, a deadlock. Locked at once, by id, after the hold, the
    presentment holds no customer account while it waits for the fees account, which the test
    holds here."""
    fees = internal_account(
        institution=institution_of(api_v2), code=Account.InternalCode.FEES, currency="EUR"
    )
    set_card_fees(api_v2, atmFee=250)
    card = funded(api_v2, load=10_000)
    assert fees.pk < card.account_id  # ids are time-ordered: the fees account is the older
    decision = approved(api_v2, card.card_id, 2_000, type="Cash", merchant=ATM)
    authorization = Authorization.objects.get(pk=decision["authorizationId"])

    probe = held_while_blocked(
        lambda: authorization_present(authorization=authorization, actor=SYSTEM),
        (Account, fees.pk),
    )

    assert probe({"customer": (Account, card.account_id)}) == {"customer": False}
    assert Account.objects.get(pk=card.account_id).posted == 10_000 - 2_000 - 250
    assert Account.objects.get(pk=fees.pk).posted == 250
