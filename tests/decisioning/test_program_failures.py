"""A program that fails, over HTTP against a real program on loopback (issue 31 items 2, 3, 7;
docs/decisioning.md): it answers late, garbage, JSON with no decision, a non-2xx status, is
down, or answers a decision TX cannot take (an amount out of range, a declineCode too long,
metadata out of the rules). Each is decided by the endpoint's `onFailure`, recorded on the
authorization (`program.error`, `status`, `latencyMs`) and told by `authorization.stood_in`;
a decline gives the hold and the card's usage back. A program that comes back decides again.
What the program decides merges its metadata and writes no `authorization.stood_in`."""

import pytest

from decisioning.models import DecisioningEndpoint
from tests.authorizations.helpers import (
    MERCHANT,
    START,
    authorization_of,
    balances,
    created,
    event_data,
    funded,
    hold_of,
    holds_of,
    items_of,
    money,
    usage,
)
from tests.decisioning.helpers import (
    APPROVE,
    GARBAGE,
    NO_DECISION,
    Program,
    create_endpoint,
    free_port,
    url_at,
)

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 1_500
INVALID_ANSWER = (
    "invalid answer: not a JSON object with a boolean `approved` (at most 4096 characters)"
)


@pytest.fixture
def program():
    program = Program()
    yield program
    program.stop()


def decide(api, card_id, amount=AMOUNT, **fields) -> dict:
    """An authorization's body, decided; `fields` join the request's body (metadata)."""
    body = {"cardId": card_id, "amount": amount, "currency": "EUR", "type": "Goods"}
    response = api.post("/card-authorizations", {**body, "merchant": MERCHANT, **fields})
    return created(response, api.version)


def event_types(api, object_id: str) -> list[str]:
    """The types of the events about `object_id`, oldest first."""
    return [e["type"] for e in reversed(items_of(api, "/events", objectId=object_id, limit=100))]


# (answer, delay, timeoutMs, the error recorded, the HTTP status recorded)
FAILURES = {
    "late": (APPROVE, 0.6, 200, "timeout: no answer within 200 ms", None),
    "garbage": (GARBAGE, 0, 1500, INVALID_ANSWER, 200),
    "no decision": (NO_DECISION, 0, 1500, INVALID_ANSWER, 200),
    "a JSON array": ((200, b"[true]"), 0, 1500, INVALID_ANSWER, 200),
    "approved as a string": ((200, b'{"approved": "yes"}'), 0, 1500, INVALID_ANSWER, 200),
    "non-2xx": (
        (503, b'{"approved": true}'),
        0,
        1500,
        "status 503: the endpoint must answer 2xx",
        503,
    ),
    "a redirect": ((302, b""), 0, 1500, "status 302: the endpoint must answer 2xx", 302),
    "amount 0": (
        (200, b'{"approved": true, "amount": 0}'),
        0,
        1500,
        f"invalid answer: amount must be from 1 to {AMOUNT}",
        200,
    ),
    "amount above the hold": (
        (200, b'{"approved": true, "amount": 1501}'),
        0,
        1500,
        f"invalid answer: amount must be from 1 to {AMOUNT}",
        200,
    ),
    "amount as a string": (
        (200, b'{"approved": true, "amount": "600"}'),
        0,
        1500,
        "invalid answer: amount must be an integer",
        200,
    ),
    "amount as a boolean": (
        (200, b'{"approved": true, "amount": true}'),
        0,
        1500,
        "invalid answer: amount must be an integer",
        200,
    ),
    "declineCode too long": (
        (200, b'{"approved": false, "declineCode": "' + b"x" * 49 + b'"}'),
        0,
        1500,
        "invalid answer: declineCode must be 1 to 48 characters",
        200,
    ),
    "declineCode empty": (
        (200, b'{"approved": false, "declineCode": ""}'),
        0,
        1500,
        "invalid answer: declineCode must be 1 to 48 characters",
        200,
    ),
    "metadata not a string": (
        (200, b'{"approved": true, "metadata": {"n": 1}}'),
        0,
        1500,
        'invalid answer: metadata: The value of "n" must be a string (or null to remove the key).',
        200,
    ),
    "an answer too long": (
        (200, b'{"approved": true, "note": "' + b"x" * 4_096 + b'"}'),
        0,
        1500,
        INVALID_ANSWER,
        200,
    ),
    "metadata not an object": (
        (200, b'{"approved": true, "metadata": ["a"]}'),
        0,
        1500,
        "invalid answer: metadata: Must be a JSON object of string keys and string values.",
        200,
    ),
}


def test_each_failure_is_declined_by_on_failure_and_gives_everything_back(api_v2, program):
    """Every failure in turn on one card and one endpoint (one test: each transactional test
    costs a database flush). Between two failures the breaker's count is set back with the
    ORM, so that each is called (five in a row would degrade it: tests/decisioning/
    test_breaker.py)."""
    endpoint_id = create_endpoint(api_v2, url=program.url, onFailure="decline")["endpointId"]
    f = funded(api_v2)
    timeout_now = 1500
    for count, (failure, (answer, delay, timeout_ms, error, status)) in enumerate(
        FAILURES.items(), start=1
    ):
        if timeout_ms != timeout_now:
            changed = api_v2.patch(
                f"/decisioning-endpoints/{endpoint_id}", {"timeoutMs": timeout_ms}
            )
            assert changed.status_code == 200, changed.content
            timeout_now = timeout_ms
        program.answer, program.delay = answer, delay
        DecisioningEndpoint.objects.filter(pk=endpoint_id).update(consecutive_failures=0)

        # The merchant takes part: a partial amount out of range is what fails, not its being
        # partial (tests/decisioning/test_partial_approvals.py).
        body = decide(api_v2, f.card_id, metadata={"terminal": "T-1"}, partialApproval=True)

        assert len(program.calls) == count, failure
        assert (body["approved"], body["status"], body["declineCode"], body["decidedBy"]) == (
            False,
            "declined",
            "program_unavailable",
            "standin",
        ), failure
        assert body["declineDetails"] == {"error": error}, failure
        assert (body["program"]["error"], body["program"]["status"]) == (error, status), failure
        assert body["program"]["answer"] is None, failure
        latency = body["program"]["latencyMs"]
        assert (timeout_ms if failure == "late" else 0) <= latency < 1_500, failure
        # An invalid answer's metadata is not taken.
        assert body["metadata"] == {"terminal": "T-1"}, failure
        # The hold placed before the call is released; the card's usage given back.
        assert hold_of(api_v2, body["holdId"])["status"] == "released", failure
        assert balances(api_v2, f.account_id) == money(START), failure
        assert usage(api_v2, f.card_id) == (0, 0, 0), failure
        assert body["transactionId"] is None, failure
        assert event_types(api_v2, body["authorizationId"]) == [
            "authorization.declined",
            "authorization.stood_in",
        ], failure
        assert event_data(api_v2, "authorization.stood_in", body["authorizationId"]) == [
            {**_stood_in_common(body), "onFailure": "decline", "error": error}
        ], failure
    assert DecisioningEndpoint.objects.get(pk=endpoint_id).degraded_at is None


def _stood_in_common(body) -> dict:
    """What `authorization.stood_in` carries besides onFailure and error (the authorization's
    event data, as `authorization.declined`'s)."""
    return {
        key: value
        for key, value in {
            "cardId": body["cardId"],
            "accountId": body["accountId"],
            "type": body["type"],
            "amount": body["amount"],
            "currency": body["currency"],
            "merchant": body["merchant"],
            "decidedBy": "standin",
            "metadata": body["metadata"],
            "declineCode": body["declineCode"],
        }.items()
        if value is not None
    }


@pytest.mark.parametrize("on_failure", ["approve", "standin"])
def test_a_late_program_is_stood_in_for_and_the_hold_kept(api_v2, program, on_failure):
    program.answer, program.delay = APPROVE, 0.6
    create_endpoint(api_v2, url=program.url, onFailure=on_failure, timeoutMs=200)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id)

    assert (body["approved"], body["status"], body["declineCode"], body["decidedBy"]) == (
        True,
        "pending",
        None,
        "standin",
    )
    assert body["program"]["error"] == "timeout: no answer within 200 ms"
    assert 200 <= body["program"]["latencyMs"] < 1_500
    assert hold_of(api_v2, body["holdId"])["status"] == "active"
    assert balances(api_v2, f.account_id) == money(START, AMOUNT)
    assert usage(api_v2, f.card_id) == (AMOUNT, 0, AMOUNT)
    assert body["transactionId"] is not None
    assert event_types(api_v2, body["authorizationId"]) == [
        "authorization.approved",
        "authorization.stood_in",
    ]
    [stood_in] = event_data(api_v2, "authorization.stood_in", body["authorizationId"])
    assert (stood_in["onFailure"], stood_in["error"]) == (
        on_failure,
        "timeout: no answer within 200 ms",
    )


def test_a_program_that_is_down_then_comes_back(api_v2):
    port = free_port()
    secret = create_endpoint(api_v2, url=url_at(port), onFailure="decline")["secret"]
    f = funded(api_v2)

    down = decide(api_v2, f.card_id)

    assert (down["approved"], down["declineCode"], down["decidedBy"]) == (
        False,
        "program_unavailable",
        "standin",
    )
    assert down["program"]["error"].startswith("connection failed")
    assert down["program"]["status"] is None
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)

    back = Program(answer=(200, b'{"approved": true, "amount": 900}'), port=port, secret=secret)
    try:
        body = decide(api_v2, f.card_id, partialApproval=True)
    finally:
        back.stop()

    assert len(back.calls) == 1
    assert (body["approved"], body["amount"], body["decidedBy"]) == (True, 900, "program")
    assert (body["program"]["error"], body["program"]["status"]) == (None, 200)
    assert balances(api_v2, f.account_id) == money(START, 900)
    assert usage(api_v2, f.card_id) == (900, 0, 900)
    active = [h["holdId"] for h in holds_of(api_v2, f.account_id) if h["status"] == "active"]
    assert active == [body["holdId"]]
    assert event_types(api_v2, body["authorizationId"]) == ["authorization.approved"]


def test_the_programs_metadata_is_merged_and_evented(api_v2, program):
    program.answer = (
        200,
        b'{"approved": true, "metadata": {"jit": "funded", "terminal": null, "basket": "b-2"}}',
    )
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, metadata={"terminal": "T-1", "basket": "b-1", "shop": "7"})

    merged = {"jit": "funded", "basket": "b-2", "shop": "7"}  # null removes, a string sets
    assert (body["approved"], body["decidedBy"], body["metadata"]) == (True, "program", merged)
    assert body["program"]["answer"] == {
        "approved": True,
        "metadata": {"jit": "funded", "terminal": None, "basket": "b-2"},
    }
    [approved] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert approved["metadata"] == merged
    assert approved["decidedBy"] == "program"
    # The program decided: no stand-in.
    assert event_types(api_v2, body["authorizationId"]) == ["authorization.approved"]
    assert authorization_of(api_v2, body["authorizationId"])["metadata"] == merged


def test_the_programs_decline_merges_its_metadata_and_stands_in_for_nothing(api_v2, program):
    program.answer = (200, b'{"approved": false, "declineCode": "risk", "metadata": {"r": "9"}}')
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, metadata={"terminal": "T-1"})

    assert (body["declineCode"], body["decidedBy"], body["metadata"]) == (
        "program_declined",
        "program",
        {"terminal": "T-1", "r": "9"},
    )
    [declined] = event_data(api_v2, "authorization.declined", body["authorizationId"])
    assert declined["metadata"] == {"terminal": "T-1", "r": "9"}
    assert event_types(api_v2, body["authorizationId"]) == ["authorization.declined"]
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
