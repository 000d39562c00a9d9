"""Concurrent authorizations of one card over HTTP, in both versions: real threads, each with
its own client and database connection, released together. The card's row lock decides them one
after the other, so together they never pass the card's daily limit nor spend more than its
account has; `verify_ledger` passes afterwards."""

from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import Account
from accounts.verification import CHECKS
from authorizations.models import Authorization
from tests.cards.api.helpers import set_limits
from tests.conftest import Api
from tests.transfers.test_concurrency_http import run_threads

from .helpers import CREATED, balances, card_lines, funded, holds_of, money, usage

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
PER_THREAD = 5
AMOUNT = 100
LEDGER_OK = f"Ledger OK: {len(CHECKS)} checks passed."


def authorize_concurrently(api, secret: str, card_id: str) -> list[dict]:
    """THREADS x PER_THREAD authorizations of AMOUNT on `card_id`; every decision, any order."""

    def work(index):
        client = Api(api.version, secret)
        decisions = []
        for _ in range(PER_THREAD):
            response = client.post(
                "/card-authorizations",
                {
                    "cardId": card_id,
                    "amount": AMOUNT,
                    "currency": "EUR",
                    "type": "Goods",
                    "merchant": {
                        "name": f"Shop {index}",
                        "mcc": "5411",
                        "countryCode": "276",
                        "channel": "pos",
                    },
                },
            )
            assert response.status_code == CREATED[api.version], response.content
            payload = response.json()
            decisions.append(payload["data"] if api.version == "v1" else payload)
        return decisions

    return [decision for decisions in run_threads(THREADS, work) for decision in decisions]


def verify_ledger() -> str:
    out = StringIO()
    call_command("verify_ledger", stdout=out)  # SystemExit(1) on a breach
    return out.getvalue().strip()


def assert_outcome(api, card_id, account_id, decisions, *, approved_count, code, posted):
    assert len(decisions) == THREADS * PER_THREAD
    approved = [d for d in decisions if d["approved"]]
    refused = [d for d in decisions if not d["approved"]]
    assert len(approved) == approved_count
    assert {(d["status"], d["declineCode"]) for d in refused} == {("declined", code)}
    assert {d["status"] for d in approved} == {"pending"}
    held = approved_count * AMOUNT
    assert balances(api, account_id) == money(posted, held)
    assert usage(api, card_id) == (held, 0, held)
    assert sorted(h["holdId"] for h in holds_of(api, account_id)) == sorted(
        d["holdId"] for d in approved
    )
    assert len(card_lines(api, card_id)) == approved_count
    assert Authorization.objects.filter(card_id=card_id).count() == THREADS * PER_THREAD
    return refused


def test_concurrent_authorizations_never_pass_the_daily_limit(api, key):
    allowed = 13  # of 40, with funds for all of them
    f = funded(api)
    set_limits(api, f.card_id, perTransaction=AMOUNT, daily=allowed * AMOUNT, dailyCash=0)
    decisions = authorize_concurrently(api, key[1], f.card_id)
    refused = assert_outcome(
        api,
        f.card_id,
        f.account_id,
        decisions,
        approved_count=allowed,
        code="limit_exceeded",
        posted=10_000,
    )
    assert {d["declineDetails"]["limit"] for d in refused} == {"daily"}
    assert {d["declineDetails"]["used"] for d in refused} == {allowed * AMOUNT}
    assert verify_ledger() == LEDGER_OK


def test_concurrent_authorizations_never_spend_more_than_the_funds(api, key):
    funds = 1_050  # floor(1050 / 100) = 10 of 40, with the limits far away
    f = funded(api, load=funds)
    decisions = authorize_concurrently(api, key[1], f.card_id)
    refused = assert_outcome(
        api,
        f.card_id,
        f.account_id,
        decisions,
        approved_count=funds // AMOUNT,
        code="insufficient_funds",
        posted=funds,
    )
    assert {d["declineDetails"]["available"] for d in refused} == {funds % AMOUNT}
    assert Account.objects.get(pk=f.account_id).available == 50
    assert not Account.objects.filter(kind=Account.Kind.CUSTOMER, available__lt=0).exists()
    assert verify_ledger() == LEDGER_OK
