"""A hypothesis property over sequences of a card authorization's messages (issue 31 item 7):
an authorization asked for any amount with a partial approval allowed (approved for what is
available), presentments that are not final clearing random parts, then a final presentment of
the rest, a random amount up to 20% over in all, or a reversal. After every step the account's
posted and pending balances and the card's usage are what a model predicts, no hold is below
zero, and at the end the ledger's invariants hold (`accounts.verification.ledger_breaches`).

Each example runs the services in a savepoint of the test's transaction, on one card made
through the API first, and rolls back; incremental authorizations join the sequences when they
exist."""

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Account, Hold
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from authorizations.services import (
    authorization_create,
    authorization_present,
    authorization_reverse,
)
from cards.models import Card, CardSpend
from core.actors import SYSTEM

from .helpers import START, funded

pytestmark = pytest.mark.django_db

MERCHANT = {"name": "Corner Shop", "mcc": "5411", "country_code": "276", "channel": "pos"}
PERCENT = st.integers(min_value=1, max_value=99)
ENDING = st.one_of(
    st.just(("rest", None)),
    st.tuples(st.just("final"), st.integers(min_value=1, max_value=120)),
    st.just(("reverse", None)),
)


@pytest.fixture
def f(api_v2):
    """One funded card for every example (made once; each example rolls back what it did)."""
    return funded(api_v2)


def state(card: Card, account_id: str) -> tuple[int, int, int]:
    account = Account.objects.get(pk=account_id)
    spent = sum(
        CardSpend.objects.filter(card_id=card.lineage_root_id).values_list("spent", flat=True)
    )
    return account.posted, account.pending, spent


@settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    asked=st.integers(min_value=1, max_value=START + 5_000),
    parts=st.lists(PERCENT, max_size=4),
    ending=ENDING,
)
def test_any_sequence_of_clearings_keeps_the_ledger_and_the_usage(f, asked, parts, ending):
    card = Card.objects.get(pk=f.card_id)
    with transaction.atomic():
        authorization = authorization_create(
            card=card,
            amount=asked,
            currency="EUR",
            type="Goods",
            merchant=MERCHANT,
            actor=SYSTEM,
            partial_approval=True,
        )
        approved = min(asked, START)
        assert (authorization.approved, authorization.amount) == (True, approved)
        assert authorization.requested_amount_or_amount == asked
        held, presented = approved, 0
        assert state(card, f.account_id) == (START, held, approved)

        for percent in parts:
            amount = held * percent // 100
            if amount < 1:
                continue
            authorization = authorization_present(
                authorization=authorization, amount=amount, final=False, actor=SYSTEM
            )
            held, presented = held - amount, presented + amount
            assert authorization.status == Authorization.Status.PENDING
            assert authorization.presented_amount == presented
            assert state(card, f.account_id) == (START - presented, held, approved)

        kind, percent = ending
        if kind == "reverse":
            authorization = authorization_reverse(authorization=authorization, actor=SYSTEM)
            expected = (START - presented, 0, presented)
        else:
            amount = held if kind == "rest" else max(1, approved * percent // 100 - presented)
            amount = min(amount, approved * 120 // 100 - presented, START - presented)
            if amount < 1:  # nothing may be presented any more: reverse instead
                authorization = authorization_reverse(authorization=authorization, actor=SYSTEM)
                expected = (START - presented, 0, presented)
            else:
                authorization = authorization_present(
                    authorization=authorization, amount=amount, final=True, actor=SYSTEM
                )
                presented += amount
                assert authorization.presented_amount == presented
                expected = (START - presented, 0, presented)
        assert state(card, f.account_id) == expected
        assert not Hold.objects.filter(account_id=f.account_id, amount__lte=0).exists()
        assert ledger_breaches() == []
        transaction.set_rollback(True)
