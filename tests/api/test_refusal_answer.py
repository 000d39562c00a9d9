"""A refused write's answer (422, 409 `invalid_state_transition`) is stored in a transaction of
its own (`api.views.TXView._answer_refusal`): the operation rolls back whole, claim included,
and a second transaction claims the key again, writes what the refusal keeps and stores the
answer. Real threads and real transactions: the key is free between the two."""

import threading
import uuid

import pytest
from django.db import connection

from api import idempotency
from api.models import IdempotencyRecord
from api.views import TXView
from tests.accounts.api.helpers import (
    assert_error,
    balances,
    created,
    funded_account,
    load,
    money,
    open_account,
)
from transfers.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)


def body(source: str, destination: str, amount: int) -> dict:
    return {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": amount,
        "currency": "EUR",
    }


def before_the_first_answer(monkeypatch, other) -> None:
    """Run `other()` to its end, in a thread of its own (its own connection), between the
    first refused request's rollback and its answer (`TXView._answer_refusal`)."""
    answer_refusal = TXView._answer_refusal
    ran = []

    def meanwhile(self, *args, **kwargs):
        def run():
            try:
                other()
            finally:
                connection.close()

        if not ran:  # the first request's refusal only
            ran.append(True)
            thread = threading.Thread(target=run)
            thread.start()
            thread.join(timeout=60)
            assert not thread.is_alive()
        return answer_refusal(self, *args, **kwargs)

    monkeypatch.setattr(TXView, "_answer_refusal", meanwhile)


def test_a_refusal_is_stored_and_replayed_with_nothing_moved(api_v2):
    source = funded_account(api_v2, 10)["accountId"]
    destination = open_account(api_v2)["accountId"]
    key = uuid.uuid4()
    first = api_v2.post("/transfers", body(source, destination, 100), idempotency_key=key)
    assert_error(
        first,
        "v2",
        422,
        "insufficient_funds",
        {"accountId": source, "available": 10, "amount": 100},
    )
    record = IdempotencyRecord.objects.get(key=key)
    assert record.status_code == 422
    load(api_v2, source, 1_000)  # the same request would pass now: it is not run again
    again = api_v2.post("/transfers", body(source, destination, 100), idempotency_key=key)
    assert (again.status_code, again.content) == (422, first.content)
    assert again["Idempotent-Replayed"] == "true"
    assert balances(api_v2, source) == money(1_010)
    assert Transfer.objects.count() == 0


def test_a_request_that_takes_the_key_meanwhile_answers_for_both(api_v2, monkeypatch):
    """Between the refusal's rollback and its answer, the same request (same key) arrives and
    passes (the source was loaded meanwhile): the first replays that answer, the refusal is not
    stored, and the money moved once."""
    source = funded_account(api_v2, 10)["accountId"]
    destination = open_account(api_v2)["accountId"]
    key = uuid.uuid4()
    request = body(source, destination, 100)
    answers = {}

    def other():
        load(api_v2, source, 1_000)
        answers["other"] = api_v2.post("/transfers", request, idempotency_key=key)

    before_the_first_answer(monkeypatch, other)
    first = api_v2.post("/transfers", request, idempotency_key=key)

    other = answers["other"]
    transfer = created(other, "v2")
    assert "Idempotent-Replayed" not in other
    assert (first.status_code, first.content) == (201, other.content)
    assert first["Idempotent-Replayed"] == "true"
    assert list(Transfer.objects.values_list("id", flat=True)) == [transfer["transferId"]]
    assert balances(api_v2, source) == money(910)
    assert IdempotencyRecord.objects.get(key=key).status_code == 201


def test_a_refusal_waits_for_the_request_that_holds_the_key(api_v2, monkeypatch):
    """The same request arrives meanwhile and is still running when the refusal is answered:
    the refusal's claim waits for it (at most IDEMPOTENCY_WAIT_SECONDS), then replays it."""
    source = funded_account(api_v2, 10)["accountId"]
    destination = open_account(api_v2)["accountId"]
    key = uuid.uuid4()
    request = body(source, destination, 5)  # passes now: the first one asks for 100
    answers = {}
    claimed = threading.Event()
    release = threading.Event()
    answer_refusal = TXView._answer_refusal
    claim = idempotency.claim

    def slow_claim(**kwargs):
        result = claim(**kwargs)
        if threading.current_thread().name == "other":
            claimed.set()
            release.wait(timeout=30)
        return result

    def meanwhile(self, *args, **kwargs):
        def other():
            try:
                answers["other"] = api_v2.post("/transfers", request, idempotency_key=key)
            finally:
                connection.close()

        thread = threading.Thread(target=other, name="other")
        thread.start()
        assert claimed.wait(timeout=30)
        threading.Timer(0.3, release.set).start()  # it commits while the refusal waits
        try:
            # The reuse is raised (422): the other request may still be answering when it is.
            return answer_refusal(self, *args, **kwargs)
        finally:
            thread.join(timeout=60)

    monkeypatch.setattr(idempotency, "claim", slow_claim)
    monkeypatch.setattr(TXView, "_answer_refusal", meanwhile)
    # Another body with the same key: the one stored first decides, the other is a reuse.
    first = api_v2.post("/transfers", body(source, destination, 100), idempotency_key=key)
    created(answers["other"], "v2")
    assert_error(first, "v2", 422, "idempotency_key_reused")
    assert Transfer.objects.count() == 1
    assert balances(api_v2, source) == money(5)


def test_what_a_refusal_keeps_is_written_once_when_its_retry_answers_first(api_v2, monkeypatch):
    """A PIN change with a wrong current PIN, sent twice with one key: the second arrives
    between the first's refusal and its answer, runs (a wrong PIN again), and stores its answer
    with its try counted. The first replays that answer: the try is counted once for the key,
    not once per attempt."""
    from tests.cards.api.helpers import account, card_of, customer, issue

    ada = customer(api_v2)
    card_id = issue(api_v2, account(api_v2, ada), ada, status="active")["cardId"]
    assert api_v2.patch(f"/cards/{card_id}/pin", {"pin": "482915"}).status_code == 200
    key = uuid.uuid4()
    wrong = {"pin": "730264", "currentPin": "591736"}
    answers = {}

    def other():
        answers["other"] = api_v2.patch(f"/cards/{card_id}/pin", wrong, idempotency_key=key)

    before_the_first_answer(monkeypatch, other)
    first = api_v2.patch(f"/cards/{card_id}/pin", wrong, idempotency_key=key)

    other = answers["other"]
    assert_error(other, "v2", 422, "incorrect_pin", {"remainingTries": 2})
    assert "Idempotent-Replayed" not in other
    assert (first.status_code, first.content) == (422, other.content)
    assert first["Idempotent-Replayed"] == "true"
    assert card_of(api_v2, card_id)["pin"] == {"set": True, "blocked": False, "remainingTries": 2}
