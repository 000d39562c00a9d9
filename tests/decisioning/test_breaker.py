"""The circuit breaker of a decisioning endpoint, through whole authorizations over HTTP against
a real program on loopback (issue 31 item 3; decisioning/breaker.py): five failures in a row
degrade the endpoint (`decisioning_endpoint.degraded`, once); a degraded endpoint is not called
and its `onFailure` decides at once (a decline places no hold); when its probe is due (the test
moves `next_probe_at` into the past with the ORM: 30 s are not waited) one authorization calls
it: a failed probe leaves it degraded, a successful one recovers it
(`decisioning_endpoint.recovered`) and the calls resume. A shadow endpoint degrades the same
way, and TX decides alone meanwhile."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from authorizations.models import Authorization
from authorizations.services import authorization_create
from authorizations.services.program import authorization_decide
from cards.models import Card
from core import operations
from core.actors import SYSTEM
from decisioning import calls
from decisioning.breaker import FAILURES_TO_DEGRADE, PROBE_SECONDS
from decisioning.models import DecisioningEndpoint
from decisioning.services import CallResult
from tests.authorizations.helpers import (
    START,
    authorize,
    balances,
    created,
    event_data,
    funded,
    holds_of,
    items_of,
    money,
    usage,
)
from tests.conftest import Api
from tests.decisioning.helpers import (
    APPROVE,
    FAIL,
    Program,
    create_endpoint,
    free_port,
    url_at,
)
from tests.transfers.test_concurrency_http import run_threads

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 100
THREADS = 7
NOT_CALLED = "degraded: not called"
FAILED = "status 500: the endpoint must answer 2xx"
# A call the program received but answered after the endpoint's deadline (the test's 1,500 ms:
# a loaded machine, seven authorizations at once) failed too, and counts as one.
TIMED_OUT = "timeout: no answer within 1500 ms"
CALL_FAILED = {FAILED, TIMED_OUT}


@pytest.fixture
def program():
    program = Program(answer=FAIL)
    yield program
    program.stop()


def decide(api, card_id) -> dict:
    return created(authorize(api, card_id, AMOUNT), api.version)


def breaker_events(api, endpoint_id: str) -> list[tuple[str, dict]]:
    """(type, data) of the endpoint's degraded/recovered events, oldest first."""
    return [
        (event["type"], event["data"])
        for event in reversed(items_of(api, "/events", objectId=endpoint_id, limit=100))
        if event["type"] in ("decisioning_endpoint.degraded", "decisioning_endpoint.recovered")
    ]


def probe_due(endpoint_id: str) -> None:
    """Move the endpoint's next probe into the past, as PROBE_SECONDS passing would."""
    moved = DecisioningEndpoint.objects.filter(pk=endpoint_id).update(
        next_probe_at=timezone.now() - timedelta(seconds=1)
    )
    assert moved == 1


def state(endpoint_id: str) -> DecisioningEndpoint:
    return DecisioningEndpoint.objects.get(pk=endpoint_id)


def degrade(api, program, endpoint_id, card_id) -> list[dict]:
    """FAILURES_TO_DEGRADE failing authorizations: each called, the last degrades."""
    bodies = []
    for count in range(1, FAILURES_TO_DEGRADE + 1):
        assert breaker_events(api, endpoint_id) == []
        body = decide(api, card_id)
        assert (body["decidedBy"], body["program"]["error"]) == ("standin", FAILED)
        assert len(program.calls) == count
        bodies.append(body)
    return bodies


def test_five_failures_degrade_and_a_probe_recovers(api_v2, program):
    endpoint_id = create_endpoint(api_v2, url=program.url, onFailure="standin")["endpointId"]
    f = funded(api_v2)

    degrade(api_v2, program, endpoint_id, f.card_id)

    degraded = state(endpoint_id)
    assert degraded.degraded_at is not None
    assert degraded.consecutive_failures == FAILURES_TO_DEGRADE
    [(type_, data)] = breaker_events(api_v2, endpoint_id)
    assert type_ == "decisioning_endpoint.degraded"
    assert data["endpointId"] == endpoint_id
    assert data["consecutiveFailures"] == FAILURES_TO_DEGRADE
    assert data["nextProbeAt"] is not None
    next_probe = degraded.next_probe_at - degraded.degraded_at
    assert next_probe == timedelta(seconds=PROBE_SECONDS)

    # Degraded: not called, onFailure (standin) decides at once.
    skipped = decide(api_v2, f.card_id)
    assert len(program.calls) == FAILURES_TO_DEGRADE
    assert (skipped["approved"], skipped["decidedBy"]) == (True, "standin")
    assert skipped["program"]["error"] == NOT_CALLED
    assert (skipped["program"]["status"], skipped["program"]["latencyMs"]) == (None, None)
    [stood_in] = event_data(api_v2, "authorization.stood_in", skipped["authorizationId"])
    assert (stood_in["onFailure"], stood_in["error"]) == ("standin", NOT_CALLED)

    # The probe is due and the program still fails: called once, still degraded, the next
    # probe PROBE_SECONDS away, no second degraded event.
    probe_due(endpoint_id)
    probe = decide(api_v2, f.card_id)
    assert len(program.calls) == FAILURES_TO_DEGRADE + 1
    assert (probe["decidedBy"], probe["program"]["error"]) == ("standin", FAILED)
    still = state(endpoint_id)
    assert still.degraded_at == degraded.degraded_at
    assert still.next_probe_at > timezone.now() + timedelta(seconds=PROBE_SECONDS - 10)
    assert [t for t, _ in breaker_events(api_v2, endpoint_id)] == ["decisioning_endpoint.degraded"]
    assert decide(api_v2, f.card_id)["program"]["error"] == NOT_CALLED
    assert len(program.calls) == FAILURES_TO_DEGRADE + 1

    # The program is back; the next probe succeeds and recovers the endpoint.
    program.answer = APPROVE
    probe_due(endpoint_id)
    recovering = decide(api_v2, f.card_id)
    assert len(program.calls) == FAILURES_TO_DEGRADE + 2
    assert (recovering["decidedBy"], recovering["program"]["error"]) == ("program", None)
    recovered = state(endpoint_id)
    assert (recovered.degraded_at, recovered.next_probe_at, recovered.consecutive_failures) == (
        None,
        None,
        0,
    )
    events = breaker_events(api_v2, endpoint_id)
    assert [t for t, _ in events] == [
        "decisioning_endpoint.degraded",
        "decisioning_endpoint.recovered",
    ]
    assert events[1][1] == {
        "endpointId": endpoint_id,
        "consecutiveFailures": 0,
        "nextProbeAt": None,
    }
    # Calls resume: every authorization asks again.
    after = decide(api_v2, f.card_id)
    assert len(program.calls) == FAILURES_TO_DEGRADE + 3
    assert after["decidedBy"] == "program"
    assert event_data(api_v2, "authorization.stood_in", after["authorizationId"]) == []
    # Every one of the 10 was approved (by the program or in its stead): all held.
    assert balances(api_v2, f.account_id) == money(START, 10 * AMOUNT)
    assert usage(api_v2, f.card_id)[0] == 10 * AMOUNT


def test_a_new_url_gives_a_degraded_endpoint_a_fresh_start(api_v2, program):
    """A PATCH of the URL (or the timeout, or `enabled`) resets the breaker: the next
    authorization calls the new target at once, not at the next probe; a change of `mode` or
    `onFailure` does not."""
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="standin")
    endpoint_id = endpoint["endpointId"]
    f = funded(api_v2)
    degrade(api_v2, program, endpoint_id, f.card_id)
    api_v2.patch(f"/decisioning-endpoints/{endpoint_id}", {"onFailure": "approve"})
    assert state(endpoint_id).degraded_at is not None

    program.answer = APPROVE
    fixed = Program(secret=endpoint["secret"])  # the program moved, with its secret
    try:
        patched = api_v2.patch(f"/decisioning-endpoints/{endpoint_id}", {"url": fixed.url})
        assert patched.status_code == 200, patched.content
        assert (patched.json()["degradedAt"], patched.json()["consecutiveFailures"]) == (None, 0)

        body = decide(api_v2, f.card_id)

        assert (body["decidedBy"], body["program"]["error"]) == ("program", None)
        assert len(fixed.calls) == 1
    finally:
        fixed.stop()


def test_a_degraded_endpoint_that_declines_places_no_hold(api_v2, program):
    endpoint_id = create_endpoint(api_v2, url=program.url, onFailure="decline")["endpointId"]
    f = funded(api_v2)
    failed = degrade(api_v2, program, endpoint_id, f.card_id)
    assert {body["declineCode"] for body in failed} == {"program_unavailable"}
    holds_before = holds_of(api_v2, f.account_id)
    assert {hold["status"] for hold in holds_before} == {"released"}

    body = decide(api_v2, f.card_id)

    assert len(program.calls) == FAILURES_TO_DEGRADE
    assert (body["approved"], body["declineCode"], body["decidedBy"]) == (
        False,
        "program_unavailable",
        "standin",
    )
    assert body["declineDetails"] == {"error": NOT_CALLED}
    assert (body["holdId"], body["transactionId"]) == (None, None)
    assert len(holds_of(api_v2, f.account_id)) == len(holds_before)
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    [stood_in] = event_data(api_v2, "authorization.stood_in", body["authorizationId"])
    assert (stood_in["onFailure"], stood_in["error"]) == ("decline", NOT_CALLED)


def test_a_degraded_shadow_endpoint_is_not_called_and_tx_decides(api_v2, program):
    endpoint_id = create_endpoint(api_v2, url=program.url, mode="shadow")["endpointId"]
    f = funded(api_v2)
    for count in range(1, FAILURES_TO_DEGRADE + 1):
        body = decide(api_v2, f.card_id)
        assert (body["approved"], body["decidedBy"], body["program"]["error"]) == (
            True,
            "tx",
            FAILED,
        )
        assert len(program.calls) == count
    assert [t for t, _ in breaker_events(api_v2, endpoint_id)] == ["decisioning_endpoint.degraded"]

    body = decide(api_v2, f.card_id)

    assert len(program.calls) == FAILURES_TO_DEGRADE
    assert (body["approved"], body["decidedBy"]) == (True, "tx")
    assert (body["program"]["mode"], body["program"]["error"]) == ("shadow", NOT_CALLED)
    assert balances(api_v2, f.account_id) == money(START, 6 * AMOUNT)
    # Shadow never stands in: TX decided every one.
    assert items_of(api_v2, "/events", type="authorization.stood_in", limit=100) == []


def test_concurrent_failures_degrade_once_and_one_request_probes(api_v2, program, settings):
    """Real threads, each with its own client and connection: failures counted together degrade
    the endpoint once; when the probe is due, of requests arriving together one calls. (Every
    thread may call: the bound of calls in flight, decisioning.calls, is not what is tested.)"""
    settings.DECISIONING_CALLS_PER_INSTITUTION = THREADS
    endpoint_id = create_endpoint(api_v2, url=program.url, onFailure="standin")["endpointId"]
    cards = [funded(api_v2, first=f"Card{index}").card_id for index in range(THREADS)]

    def work(index):
        client = Api("v2", api_v2.key)
        return created(authorize(client, cards[index], AMOUNT), "v2")

    failed = run_threads(THREADS, work)

    assert {body["decidedBy"] for body in failed} == {"standin"}
    called = [body for body in failed if body["program"]["error"] in CALL_FAILED]
    # At least the five that degraded it were called; the rest maybe not (degraded already).
    assert len(called) == len(program.calls) >= FAILURES_TO_DEGRADE
    assert {body["program"]["error"] for body in failed} <= CALL_FAILED | {NOT_CALLED}
    assert [t for t, _ in breaker_events(api_v2, endpoint_id)] == ["decisioning_endpoint.degraded"]

    program.delay = 0.5  # the probe is still thinking while the others arrive
    calls_before = len(program.calls)
    probe_due(endpoint_id)
    together = run_threads(THREADS, work)

    assert len(program.calls) == calls_before + 1
    errors = [body["program"]["error"] for body in together]
    assert [error for error in errors if error != NOT_CALLED] in ([FAILED], [TIMED_OUT])
    assert errors.count(NOT_CALLED) == THREADS - 1
    assert [t for t, _ in breaker_events(api_v2, endpoint_id)] == ["decisioning_endpoint.degraded"]
    assert state(endpoint_id).degraded_at is not None


def awaiting_authorization(api, on_failure: str, failures_before: int):
    """An authorization `authorization_create(ask_program=True)` left awaiting its program (the
    request's first transaction, run here by the service: the call is the test's to make up),
    its endpoint having failed `failures_before` times in a row (a success then resets it)."""
    endpoint_id = create_endpoint(api, url=url_at(free_port()), onFailure=on_failure)["endpointId"]
    DecisioningEndpoint.objects.filter(pk=endpoint_id).update(consecutive_failures=failures_before)
    f = funded(api)
    with calls.scope(), operations.operation(SYSTEM):
        authorization = authorization_create(
            card=Card.objects.get(pk=f.card_id),
            amount=AMOUNT,
            currency="EUR",
            type="Goods",
            merchant={
                "name": "Corner Shop",
                "mcc": "5411",
                "country_code": "276",
                "channel": "pos",
            },
            actor=SYSTEM,
            ask_program=True,
        )
    assert authorization.awaiting_program
    return endpoint_id, f, authorization


@pytest.mark.parametrize(
    ("result", "failures_before"),
    [
        (CallResult(ok=False, status=500, latency_ms=5, error=FAILED), 0),
        (CallResult(ok=True, status=200, latency_ms=5, answer={"approved": False}), 2),
        (CallResult(ok=True, status=200, latency_ms=5, answer={"approved": True, "amount": 40}), 2),
    ],
    ids=["failure declined", "program declines", "program approves part"],
)
def test_the_decision_writes_the_endpoints_row_last(api_v2, result, failures_before):
    """The lock order (docs/money.md, "Locking"): the authorization's second transaction takes
    its hold, account and card before the endpoint's row, as its first transaction took the
    card and account before the breaker's gate; the other order could wait in a cycle with a
    probe's first transaction on the same card."""
    endpoint_id, f, authorization = awaiting_authorization(api_v2, "decline", failures_before)
    # The merchant takes part, so that a partial answer is one (not a failure).
    Authorization.objects.filter(pk=authorization.pk).update(partial_approval=True)

    with CaptureQueriesContext(connection) as queries, operations.operation(SYSTEM):
        decided = authorization_decide(authorization=authorization, result=result)

    statements = [query["sql"] for query in queries.captured_queries]
    endpoint_writes = [
        index
        for index, sql in enumerate(statements)
        if sql.startswith('UPDATE "decisioning_decisioningendpoint"')
    ]
    others = [
        index
        for index, sql in enumerate(statements)
        if "FOR UPDATE" in sql
        or "tx_post" in sql
        or sql.startswith(('UPDATE "accounts_hold"', 'INSERT INTO "accounts_hold"'))
        or "cards_cardspend" in sql
    ]
    assert endpoint_writes and others
    assert min(endpoint_writes) > max(others), "\n".join(sql[:90] for sql in statements)
    assert decided.decision == Authorization.Decision.DECLINED or decided.amount == 40
    assert state(endpoint_id).consecutive_failures == (0 if result.ok else failures_before + 1)
