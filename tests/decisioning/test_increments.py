"""Incremental authorizations the program decides (issue 31 items 2, 5, 7; docs/decisioning.md,
"Increments"), over HTTP against a real program on loopback and real transactions: checked
like a new authorization, TX first and then the program; the program approves, declines,
answers an amount that is not the increment's, fails and `onFailure` decides, is degraded and
not called, is in shadow mode; while it thinks nothing of TX is held, the authorization takes
no other message and a retry of the key is told it is in use; a request killed mid-call is
decided by the job once; a hold that expires meanwhile declines the increment."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from authorizations.models import Authorization, AuthorizationIncrement
from authorizations.services import authorization_increment, increments_resolve_stranded
from authorizations.services.increment_program import increment_decide
from authorizations.services.program import STRANDED, STRANDED_AFTER
from core import operations
from core.actors import SYSTEM
from decisioning import calls
from decisioning.models import DecisioningEndpoint
from decisioning.services import CallResult
from jobs import tasks
from tests.accounts.api.helpers import funded_account, transfer
from tests.authorizations.helpers import (
    START,
    approved,
    assert_error,
    authorization_of,
    balances,
    card_lines,
    created,
    event_data,
    expire_holds,
    funded,
    hold_of,
    increment,
    increments_of,
    money,
    past_due,
    present,
    presented,
    reverse,
    usage,
)
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger
from tests.decisioning.helpers import FAIL, InThread, Program, create_endpoint
from tests.decisioning.test_stranded import command, event_types, killed_mid_call

pytestmark = pytest.mark.django_db(transaction=True)

FIRST = 1_000  # the authorization the program approved
MORE = 500  # the increment


@pytest.fixture
def program():
    program = Program(watch_transactions=True)
    yield program
    program.stop()


def pending(api, program, **endpoint_fields):
    """A live endpoint on `program`, a funded card and an authorization of FIRST the program
    approved; the program's calls so far forgotten."""
    endpoint = create_endpoint(api, url=program.url, **endpoint_fields)
    f = funded(api)
    auth = approved(api, f.card_id, FIRST)
    assert auth["decidedBy"] == ("program" if endpoint["mode"] == "live" else "tx")
    program.calls.clear()
    program.called.clear()
    return f, auth, endpoint


def raise_by(api, authorization_id: str, amount: int = MORE, **kwargs) -> dict:
    return created(increment(api, authorization_id, amount, **kwargs), "v2")


def assert_as_before(api, f, auth) -> None:
    """The authorization holds FIRST again (a new hold, as the old one's expiry), the account
    and the card's usage as before the increment."""
    standing = authorization_of(api, auth["authorizationId"])
    assert (standing["status"], standing["amount"]) == ("pending", FIRST)
    hold = hold_of(api, standing["holdId"])
    assert (hold["status"], hold["amount"]) == ("active", FIRST)
    assert hold["expiresAt"] == hold_of(api, auth["holdId"])["expiresAt"]
    assert balances(api, f.account_id) == money(START, FIRST)
    assert usage(api, f.card_id) == (FIRST, 0, FIRST)
    [line] = card_lines(api, f.card_id)
    assert (line["amount"], line["holdId"], line["status"]) == (FIRST, hold["holdId"], "pending")
    assert verify_ledger() == LEDGER_OK


def test_the_program_approves_an_increment_with_nothing_open(api_v2, program):
    f, auth, endpoint = pending(api_v2, program)

    body = raise_by(api_v2, auth["authorizationId"])

    assert (body["approved"], body["decision"], body["decidedBy"]) == (True, "approved", "program")
    assert body["program"] == {
        "endpointId": endpoint["endpointId"],
        "mode": "live",
        "latencyMs": body["program"]["latencyMs"],
        "status": 200,
        "error": None,
        "answer": {"approved": True},
    }
    assert body["decidedAt"] >= body["createdAt"]
    standing = body["authorization"]
    assert (standing["amount"], standing["holdId"]) == (FIRST + MORE, body["holdId"])
    assert hold_of(api_v2, body["holdId"])["amount"] == FIRST + MORE
    [call] = program.calls
    assert call.open_transactions == 0
    payload = Webhook(endpoint["secret"]).verify(call.body, call.headers)
    assert (payload["type"], payload["id"]) == ("authorization.increment", body["incrementId"])
    assert payload["increment"] == {
        "incrementId": body["incrementId"],
        "amount": MORE,
        "createdAt": body["createdAt"],
    }
    # The authorization as it stood, with the increment already held.
    assert payload["authorization"]["authorizationId"] == auth["authorizationId"]
    assert payload["authorization"]["amount"] == FIRST
    assert payload["account"]["available"] == START - FIRST - MORE
    assert balances(api_v2, f.account_id) == money(START, FIRST + MORE)
    assert usage(api_v2, f.card_id) == (FIRST + MORE, 0, FIRST + MORE)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["holdId"]) == (FIRST + MORE, body["holdId"])
    [event] = event_data(api_v2, "authorization.incremented", auth["authorizationId"])
    assert (event["incrementId"], event["incrementDecidedBy"]) == (body["incrementId"], "program")
    assert verify_ledger() == LEDGER_OK


def test_the_program_declines_an_increment_and_the_old_total_is_held_again(api_v2, program):
    f, auth, _ = pending(api_v2, program)
    program.answer = (
        200,
        b'{"approved": false, "declineCode": "jit_no_funds", "metadata": {"jit": "refused"}}',
    )

    body = raise_by(api_v2, auth["authorizationId"])

    assert (body["approved"], body["decision"], body["decidedBy"]) == (
        False,
        "declined",
        "program",
    )
    assert (body["declineCode"], body["declineDetails"]) == (
        "program_declined",
        {"programDeclineCode": "jit_no_funds"},
    )
    # What held the increment while the program thought, released and kept on the record.
    released = hold_of(api_v2, body["holdId"])
    assert (released["status"], released["amount"]) == ("released", FIRST + MORE)
    assert body["authorization"]["metadata"] == {"jit": "refused"}
    assert_as_before(api_v2, f, auth)
    [event] = event_data(api_v2, "authorization.increment_declined", auth["authorizationId"])
    assert (event["incrementDeclineCode"], event["incrementDecidedBy"]) == (
        "program_declined",
        "program",
    )
    assert event_data(api_v2, "authorization.incremented", auth["authorizationId"]) == []


@pytest.mark.parametrize(
    ("answer", "approved_whole"),
    [(b'{"approved": true, "amount": 500}', True), (b'{"approved": true, "amount": 200}', False)],
    ids=["the-increment", "part-of-it"],
)
def test_an_increment_is_approved_whole_or_not_at_all(api_v2, program, answer, approved_whole):
    f, auth, _ = pending(api_v2, program, onFailure="decline")
    program.answer = (200, answer)

    body = raise_by(api_v2, auth["authorizationId"])

    if approved_whole:
        assert (body["decision"], body["decidedBy"]) == ("approved", "program")
        assert body["authorization"]["amount"] == FIRST + MORE
        return
    # Not a valid answer: the endpoint's onFailure (decline) decides.
    assert (body["decision"], body["decidedBy"], body["declineCode"]) == (
        "declined",
        "standin",
        "program_unavailable",
    )
    assert body["program"]["error"] == (
        "invalid answer: amount must be 500 (approved whole or declined)"
    )
    assert body["program"]["answer"] is None
    assert_as_before(api_v2, f, auth)


@pytest.mark.parametrize(
    ("on_failure", "approved"), [("decline", False), ("approve", True), ("standin", True)]
)
def test_a_failing_program_leaves_the_increment_to_on_failure(
    api_v2, program, on_failure, approved
):
    f, auth, _ = pending(api_v2, program, onFailure=on_failure)
    program.answer = FAIL

    body = raise_by(api_v2, auth["authorizationId"])

    assert (body["approved"], body["decidedBy"], body["program"]["status"]) == (
        approved,
        "standin",
        500,
    )
    assert body["program"]["error"].startswith("status 500")
    assert body["declineCode"] == (None if approved else "program_unavailable")
    [stood_in] = event_data(api_v2, "authorization.stood_in", auth["authorizationId"])
    assert (stood_in["incrementId"], stood_in["onFailure"]) == (body["incrementId"], on_failure)
    assert stood_in["error"] == body["program"]["error"]
    if approved:
        assert balances(api_v2, f.account_id) == money(START, FIRST + MORE)
        assert body["authorization"]["amount"] == FIRST + MORE
    else:
        assert_as_before(api_v2, f, auth)


def test_a_degraded_program_is_not_called_about_an_increment(api_v2, program):
    f, auth, endpoint = pending(api_v2, program, onFailure="decline")
    DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(
        degraded_at=timezone.now(), next_probe_at=timezone.now() + timedelta(minutes=1)
    )

    body = raise_by(api_v2, auth["authorizationId"])

    assert (body["decision"], body["decidedBy"], body["declineCode"]) == (
        "declined",
        "standin",
        "program_unavailable",
    )
    assert (body["program"]["error"], body["program"]["latencyMs"]) == (
        "degraded: not called",
        None,
    )
    # Declined before anything was held: no hold on the record.
    assert body["holdId"] is None
    assert program.calls == []
    assert_as_before(api_v2, f, auth)


def test_tx_declines_an_increment_first_and_never_calls_the_program(api_v2, program):
    f, auth, _ = pending(api_v2, program)

    body = raise_by(api_v2, auth["authorizationId"], START)

    assert (body["declineCode"], body["decidedBy"], body["program"]) == (
        "insufficient_funds",
        "tx",
        None,
    )
    assert program.calls == []
    assert_as_before(api_v2, f, auth)


def test_shadow_is_recorded_on_the_increment_not_obeyed(api_v2, program):
    program.answer = (200, b'{"approved": false}')
    f, auth, _ = pending(api_v2, program, mode="shadow")

    body = raise_by(api_v2, auth["authorizationId"])

    assert (body["approved"], body["decidedBy"]) == (True, "tx")
    assert (body["program"]["mode"], body["program"]["answer"]) == ("shadow", {"approved": False})
    assert body["authorization"]["amount"] == FIRST + MORE
    [call] = program.calls
    assert call.payload["type"] == "authorization.increment"
    [listed] = increments_of(api_v2, auth["authorizationId"])[0]
    assert listed == {key: value for key, value in body.items() if key != "authorization"}


def test_while_the_program_thinks_the_authorization_takes_no_other_message(api_v2, program):
    f, auth, _ = pending(api_v2, program, timeoutMs=3000)
    authorization_id = auth["authorizationId"]
    other = funded_account(api_v2, 0)["accountId"]
    program.delay = 1.5
    key = str(uuid.uuid4())

    thinking = InThread(
        api_v2, lambda client: increment(client, authorization_id, MORE, idempotency_key=key)
    )
    assert program.called.wait(10), "the program was never called"

    [awaiting] = increments_of(api_v2, authorization_id)[0]
    assert (awaiting["decision"], awaiting["approved"], awaiting["decidedAt"]) == (
        "awaiting_program",
        False,
        None,
    )
    assert (awaiting["program"]["latencyMs"], awaiting["declineCode"]) == (None, None)
    standing = authorization_of(api_v2, authorization_id)
    assert (standing["status"], standing["amount"], standing["holdId"]) == (
        "pending",
        FIRST,
        awaiting["holdId"],
    )
    assert balances(api_v2, f.account_id) == money(START, FIRST + MORE)
    for refused, to in [
        (present(api_v2, authorization_id), "presented"),
        (reverse(api_v2, authorization_id), "reversed"),
        (increment(api_v2, authorization_id, 100), "incremented"),
    ]:
        assert_error(
            refused, "v2", 409, "invalid_state_transition", {"from": "awaiting_program", "to": to}
        )
    in_use = increment(api_v2, authorization_id, MORE, idempotency_key=key)
    assert_error(in_use, "v2", 409, "idempotency_key_in_use")
    # Nothing of TX is held: a transfer out of the card's account completes meanwhile.
    moved = created(transfer(api_v2, f.account_id, other, 2_000), "v2")
    assert moved["status"] == "posted" and thinking.alive()

    first = thinking.result()
    body = created(first, "v2")
    assert (body["decision"], body["authorization"]["amount"]) == ("approved", FIRST + MORE)
    assert len(program.calls) == 1 and program.calls[0].open_transactions == 0
    again = increment(api_v2, authorization_id, MORE, idempotency_key=key)
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert len(program.calls) == 1
    assert presented(api_v2, authorization_id)["presentedAmount"] == FIRST + MORE
    assert balances(api_v2, f.account_id) == money(START - 2_000 - FIRST - MORE)
    assert verify_ledger() == LEDGER_OK


def test_a_request_killed_mid_call_is_decided_by_the_job_once(api_v2):
    program = Program()
    try:
        f, auth, _ = pending(api_v2, program, onFailure="approve", timeoutMs=3000)
        program.delay = 10  # thinks far longer than the process lives
        authorization_id = auth["authorizationId"]
        key = str(uuid.uuid4())
        killed_mid_call(
            api_v2,
            program,
            key,
            f"/card-authorizations/{authorization_id}/increments",
            {"amount": MORE},
        )
    finally:
        program.stop()
    [left] = AuthorizationIncrement.objects.filter(authorization_id=authorization_id)
    assert left.decision == AuthorizationIncrement.Decision.AWAITING_PROGRAM
    assert balances(api_v2, f.account_id) == money(START, FIRST + MORE)
    assert_error(
        increment(api_v2, authorization_id, MORE, idempotency_key=key),
        "v2",
        409,
        "idempotency_key_in_use",
    )

    # Not yet stranded: an answer may still come.
    assert resolve(now=left.created_at + STRANDED_AFTER) == 0
    AuthorizationIncrement.objects.filter(pk=left.pk).update(
        created_at=left.created_at - STRANDED_AFTER - timedelta(seconds=1)
    )
    assert command() == "Decided 0 stranded card authorization(s) and 1 increment(s)."
    assert tasks.resolve_stranded_authorizations(timestamp=0) == {
        "authorizations": 0,
        "increments": 0,
    }

    # A late answer finds it decided and changes nothing.
    late = AuthorizationIncrement.objects.select_related("decisioning_endpoint").get(pk=left.pk)
    with operations.operation(SYSTEM):
        increment_decide(
            increment=late,
            result=CallResult(ok=True, status=200, latency_ms=9_000, answer={"approved": False}),
        )

    retried = increment(api_v2, authorization_id, MORE, idempotency_key=key)
    body = created(retried, "v2")
    assert (body["incrementId"], body["decision"], body["decidedBy"]) == (
        left.pk,
        "approved",
        "standin",
    )
    assert (body["program"]["error"], body["program"]["answer"]) == (STRANDED, None)
    assert body["authorization"]["amount"] == FIRST + MORE
    replayed = increment(api_v2, authorization_id, MORE, idempotency_key=key)
    assert replayed.content == retried.content and replayed["Idempotent-Replayed"] == "true"
    assert event_types(api_v2, authorization_id)[-2:] == [
        "authorization.incremented",
        "authorization.stood_in",
    ]
    assert balances(api_v2, f.account_id) == money(START, FIRST + MORE)
    assert usage(api_v2, f.card_id) == (FIRST + MORE, 0, FIRST + MORE)
    assert verify_ledger() == LEDGER_OK


def test_a_hold_that_expires_while_the_program_thinks_declines_the_increment(api_v2, program):
    f, auth, _ = pending(api_v2, program)
    authorization = Authorization.objects.select_related("card").get(pk=auth["authorizationId"])
    with calls.scope(), operations.operation(SYSTEM):
        left = authorization_increment(
            authorization=authorization, amount=MORE, actor=SYSTEM, ask_program=True
        )
    assert left.awaiting_program
    past_due(left.hold_id)
    assert expire_holds() == "Expired 0 hold(s), 1 card authorization(s) and 0 pending transfer(s)."

    with operations.operation(SYSTEM):
        decided = increment_decide(
            increment=left,
            result=CallResult(ok=True, status=200, latency_ms=40, answer={"approved": True}),
        )

    assert (decided.decision, decided.decline_code, decided.decided_by) == (
        "declined",
        "authorization_expired",
        "program",
    )
    assert decided.decline_details == {"status": "expired"}
    expired = authorization_of(api_v2, auth["authorizationId"])
    assert (expired["status"], expired["amount"]) == ("expired", FIRST)
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    assert verify_ledger() == LEDGER_OK


def resolve(now) -> int:
    return operations.run_batches(increments_resolve_stranded, actor=SYSTEM, now=now)
