"""Program calls in flight, bounded per institution in each process (issue 46, H4;
decisioning/calls.py, docs/decisioning.md "Calls in flight"), over HTTP against real programs
on loopback that answer when the test says (`Program(held=True)`): the bound reached exactly,
past it `onFailure` decides at once and nothing is held for a decline, another institution's
calls untouched, the slot given back whatever fails and wherever, a self-test is 429 while the
bound is reached (and takes a slot itself), and each API key's self-tests limited per window,
counted exactly. The module's own rules first, without a database."""

import threading
import types

import pytest

from api import idempotency, ratelimit
from api.models import RateCounter
from authorizations import apis as authorizations_apis
from authorizations.services import authorize as authorize_module
from authorizations.services import program as program_module
from core.metrics import REGISTRY
from decisioning import calls
from decisioning.apis import SELF_TESTS_LIMITED
from decisioning.services import SELF_TEST_BUSY
from tests.accounts.api.helpers import ANY
from tests.authorizations.helpers import (
    START,
    approved,
    assert_error,
    authorize,
    balances,
    created,
    event_data,
    funded,
    holds_of,
    increment,
    money,
    usage,
)
from tests.conftest import Api
from tests.decisioning.helpers import APPROVE, InThread, Program, create_endpoint
from tests.factories import InstitutionFactory, issue_key

AMOUNT = 100


# --- the module, alone
@pytest.fixture
def bound(settings):
    settings.DECISIONING_CALLS_PER_INSTITUTION = 2
    return 2


def test_slots_are_taken_up_to_the_bound_and_given_back(bound):
    with calls.scope():
        assert calls.take(institution_id="fi_a", call_id="auth_1")
        assert calls.take(institution_id="fi_a", call_id="auth_2")
        assert not calls.take(institution_id="fi_a", call_id="auth_3")  # nothing held for it
        assert calls.take(institution_id="fi_b", call_id="auth_4")  # a count per institution
        assert (calls.in_flight("fi_a"), calls.in_flight("fi_b")) == (2, 1)
        calls.release("auth_1")
        calls.release("auth_1")  # once only
        calls.release("auth_3")  # never taken: nothing
        assert calls.in_flight("fi_a") == 1
        assert calls.take(institution_id="fi_a", call_id="auth_5")
        assert calls.in_flight("fi_a") == 2
    # The scope's end gave back what was still taken.
    assert (calls.in_flight("fi_a"), calls.in_flight("fi_b")) == (0, 0)


def test_a_scope_ended_by_an_exception_gives_its_slots_back(bound):
    with pytest.raises(ZeroDivisionError), calls.scope():
        assert calls.take(institution_id="fi_c", call_id="auth_1")
        1 / 0  # noqa: B018
    assert calls.in_flight("fi_c") == 0


def test_a_slot_is_taken_inside_a_scope_only(bound):
    with pytest.raises(RuntimeError, match="scope"):
        calls.take(institution_id="fi_d", call_id="auth_1")
    assert calls.in_flight("fi_d") == 0


def test_each_thread_has_its_own_scope(bound):
    """A request's scope is its own: another thread's end gives back only its own slots."""
    taken = threading.Event()
    done = threading.Event()

    def other():
        with calls.scope():
            calls.take(institution_id="fi_e", call_id="auth_other")
            taken.set()
            done.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    assert taken.wait(5)
    with calls.scope():
        assert calls.take(institution_id="fi_e", call_id="auth_mine")
        calls.release("auth_other")  # not this scope's: nothing
        assert calls.in_flight("fi_e") == 2
    assert calls.in_flight("fi_e") == 1
    done.set()
    thread.join(5)
    assert calls.in_flight("fi_e") == 0


# --- through HTTP, with real threads and transactions
real_transactions = pytest.mark.django_db(transaction=True)


@pytest.fixture
def program():
    program = Program(answer=APPROVE, held=True)
    yield program
    program.stop()


def busy_calls(mode: str = "live") -> float:
    value = REGISTRY.get_sample_value(
        "tx_decisioning_calls_total", {"mode": mode, "outcome": "busy"}
    )
    return value or 0.0


def thinking(api, program, cards: list[str]) -> list[InThread]:
    """An authorization of each card, each on a thread of its own, all at the program now."""
    before = len(program.calls)
    pending = [
        InThread(api, lambda client, card_id=card_id: authorize(client, card_id, AMOUNT))
        for card_id in cards
    ]
    program.wait_for(before + len(cards))
    return pending


@real_transactions
def test_the_bound_reached_exactly_then_onfailure_decides_at_once(
    api_v2, institution, program, bound
):
    """Two calls of bank A in flight (the bound): the third authorization is approved by its
    `onFailure` (standin) at once, the program never hears of it; bank B's program is called
    meanwhile (a count of its own); once A's calls return, A's program is called again."""
    create_endpoint(api_v2, url=program.url, timeoutMs=3000, onFailure="standin")
    cards = [funded(api_v2, first=f"Card{index}").card_id for index in range(3)]
    other = Api("v2", issue_key(InstitutionFactory())[1])
    theirs = Program(answer=APPROVE)
    busy_before = busy_calls()
    try:
        create_endpoint(other, url=theirs.url)
        their_card = funded(other).card_id
        pending = thinking(api_v2, program, cards[:2])
        assert calls.in_flight(institution.pk) == 2

        third = created(authorize(api_v2, cards[2], AMOUNT), "v2")

        assert len(program.calls) == 2
        assert (third["approved"], third["decidedBy"]) == (True, "standin")
        assert third["program"]["error"] == (
            "busy: not called, 2 calls of this institution in flight (the limit)"
        )
        assert (third["program"]["status"], third["program"]["latencyMs"]) == (None, None)
        [stood_in] = event_data(api_v2, "authorization.stood_in", third["authorizationId"])
        assert (stood_in["onFailure"], stood_in["error"]) == ("standin", calls.busy_error(2))
        assert busy_calls() == busy_before + 1
        # Bank B's program is called while A's bound is reached.
        assert created(authorize(other, their_card, AMOUNT), "v2")["decidedBy"] == "program"
        assert len(theirs.calls) == 1

        program.answer_now()
        assert [created(p.result(), "v2")["decidedBy"] for p in pending] == ["program"] * 2
        assert calls.in_flight(institution.pk) == 0
        again = created(authorize(api_v2, cards[2], AMOUNT), "v2")
        assert (again["decidedBy"], len(program.calls)) == ("program", 3)
    finally:
        program.answer_now()
        theirs.stop()


@real_transactions
def test_past_the_bound_a_decline_holds_nothing(api_v2, program, settings):
    """`onFailure: decline` past the bound: `program_unavailable`, decided before anything is
    held (no hold, no usage), as a degraded endpoint's."""
    settings.DECISIONING_CALLS_PER_INSTITUTION = 1
    create_endpoint(api_v2, url=program.url, timeoutMs=3000, onFailure="decline")
    first, second = funded(api_v2, first="First"), funded(api_v2, first="Second")
    try:
        [pending] = thinking(api_v2, program, [first.card_id])

        declined = created(authorize(api_v2, second.card_id, AMOUNT), "v2")

        assert (declined["approved"], declined["decidedBy"]) == (False, "standin")
        assert declined["declineCode"] == "program_unavailable"
        assert declined["declineDetails"] == {"error": calls.busy_error(1)}
        assert declined["holdId"] is None
        assert holds_of(api_v2, second.account_id) == []
        assert balances(api_v2, second.account_id) == money(START)
        assert usage(api_v2, second.card_id) == (0, 0, 0)
        assert len(program.calls) == 1
        program.answer_now()
        assert created(pending.result(), "v2")["decidedBy"] == "program"
    finally:
        program.answer_now()


@real_transactions
def test_past_the_bound_an_increment_is_decided_at_once(api_v2, program, settings):
    settings.DECISIONING_CALLS_PER_INSTITUTION = 1
    create_endpoint(api_v2, url=program.url, timeoutMs=3000, onFailure="standin")
    first, second = funded(api_v2, first="First"), funded(api_v2, first="Second")
    program.answer_now()
    authorization = approved(api_v2, first.card_id, AMOUNT)
    program.hold()
    try:
        [pending] = thinking(api_v2, program, [second.card_id])
        raised = created(increment(api_v2, authorization["authorizationId"], 50), "v2")
        assert (raised["approved"], raised["decidedBy"]) == (True, "standin")
        assert raised["program"]["error"] == calls.busy_error(1)
        assert raised["authorization"]["amount"] == AMOUNT + 50
        assert len(program.calls) == 2  # the first authorization's and the one thinking
        program.answer_now()
        pending.result()
    finally:
        program.answer_now()


@real_transactions
def test_a_self_test_is_429_while_the_bound_is_reached_and_holds_a_slot(
    api_v2, institution, program, settings
):
    settings.DECISIONING_CALLS_PER_INSTITUTION = 1
    endpoint_id = create_endpoint(api_v2, url=program.url, timeoutMs=3000)["endpointId"]
    cards = [funded(api_v2, first=f"Card{index}").card_id for index in range(2)]
    tests_path = f"/decisioning-endpoints/{endpoint_id}/tests"
    try:
        [pending] = thinking(api_v2, program, cards[:1])
        refused = api_v2.post(tests_path, {})
        assert_error(refused, "v2", 429, "rate_limited", message=SELF_TEST_BUSY)
        assert refused["Retry-After"] == "3"  # the longest a call holds its slot
        assert len(program.calls) == 1
        program.answer_now()
        pending.result()

        # The other way round: a self-test thinking holds the institution's one slot.
        program.hold()
        testing = InThread(api_v2, lambda client: client.post(tests_path, {}))
        program.wait_for(2)
        busy = created(authorize(api_v2, cards[1], AMOUNT), "v2")
        assert busy["program"]["error"] == calls.busy_error(1)
        program.answer_now()
        assert testing.result().json()["ok"] is True
        assert calls.in_flight(institution.pk) == 0
    finally:
        program.answer_now()


@real_transactions
def test_the_slot_is_given_back_when_the_call_returns(api_v2, institution, program, monkeypatch):
    """Before the second transaction decides: the count is the calls in flight, not the
    requests."""
    program.answer_now()
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)
    seen = []
    decide = authorizations_apis.authorization_decide

    def deciding(**kwargs):
        seen.append(calls.in_flight(institution.pk))
        return decide(**kwargs)

    monkeypatch.setattr(authorizations_apis, "authorization_decide", deciding)
    assert created(authorize(api_v2, f.card_id, AMOUNT), "v2")["decidedBy"] == "program"
    assert seen == [0]


def _raise(*args, **kwargs):
    raise RuntimeError("injected")


@real_transactions
@pytest.mark.parametrize(
    "where",
    [
        (authorize_module, "hold_place"),  # the first transaction, after the slot was taken
        (idempotency, "continue_later"),  # its idempotency record, before it commits
        (program_module, "ask_about_authorization"),  # the call itself
    ],
    ids=["first transaction", "idempotency record", "the call"],
)
def test_a_slot_is_given_back_whatever_fails(
    api_v2, institution, program, settings, monkeypatch, where
):
    settings.DECISIONING_CALLS_PER_INSTITUTION = 1
    program.answer_now()
    create_endpoint(api_v2, url=program.url, timeoutMs=3000)
    f = funded(api_v2)
    with monkeypatch.context() as patched:
        patched.setattr(*where, _raise)
        failed = authorize(api_v2, f.card_id, AMOUNT)
    assert_error(failed, "v2", 500, "internal_error", details=ANY)
    assert calls.in_flight(institution.pk) == 0
    # The one slot is free: the next authorization calls the program.
    assert created(authorize(api_v2, f.card_id, AMOUNT), "v2")["decidedBy"] == "program"


# --- each key's self-tests, counted exactly
WINDOW_START = 1_700_000_040  # a multiple of 60


@pytest.fixture
def clock(monkeypatch, settings):
    """The rate limiter's clock, 15.25 s into a 60 s window: Retry-After is 45."""
    settings.RATE_LIMIT_WINDOW_SECONDS = 60
    now = types.SimpleNamespace(value=WINDOW_START + 15.25)
    monkeypatch.setattr(ratelimit, "time", types.SimpleNamespace(time=lambda: now.value))
    return now


@real_transactions
def test_each_api_key_runs_so_many_self_tests_a_window(api_v2, key, institution, clock, settings):
    settings.DECISIONING_SELF_TESTS_PER_KEY = 2
    program = Program(answer=APPROVE)
    try:
        endpoint_id = create_endpoint(api_v2, url=program.url)["endpointId"]
        path = f"/decisioning-endpoints/{endpoint_id}/tests"
        for _ in range(2):
            assert api_v2.post(path, {}).json()["ok"] is True
        refused = api_v2.post(path, {})
        assert_error(refused, "v2", 429, "rate_limited", message=SELF_TESTS_LIMITED)
        assert refused["Retry-After"] == "45"
        assert len(program.calls) == 2
        # Counted exactly, the refused one too, per key: another key of the bank may.
        bucket = f"self-tests:key:{key[0].pk}"
        assert RateCounter.objects.get(bucket=bucket, window_start=WINDOW_START).count == 3
        colleague = Api("v2", issue_key(institution)[1])
        assert colleague.post(path, {}).json()["ok"] is True
        # The next window starts from zero.
        clock.value = WINDOW_START + 60
        assert api_v2.post(path, {}).json()["ok"] is True
        assert len(program.calls) == 4
    finally:
        program.stop()
