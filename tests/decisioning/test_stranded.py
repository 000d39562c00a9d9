"""A process killed between the hold and the decision (issue 31 items 2, 7; docs/decisioning.md,
"After a crash"). A real separate process (`sys.executable`, the test settings, the test
database) POSTs the authorization through Django's test client and is SIGKILLed while the
program (10 s) is still thinking: its first transaction committed the hold, the card's usage
and the idempotency record without an answer; nothing was open when it died. Then the recovery
(`authorizations_resolve_stranded`, its command and its job) decides it by `onFailure` once, however
often it runs; a late answer changes nothing; a retry of the killed request's key answers the
decided authorization and a second retry replays those bytes; `verify_ledger` passes."""

import json
import os
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from api.models import IdempotencyRecord
from authorizations.models import Authorization
from authorizations.services import authorizations_resolve_stranded
from authorizations.services.program import STRANDED, STRANDED_AFTER, authorization_decide
from core import operations
from core.actors import SYSTEM
from decisioning.services import CallResult
from jobs import tasks
from tests.authorizations.helpers import (
    MERCHANT,
    START,
    authorization_of,
    balances,
    event_data,
    funded,
    hold_of,
    items_of,
    money,
    usage,
)
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger
from tests.decisioning.helpers import APPROVE, InThread, Program, create_endpoint
from tests.jobs.workers import ROOT, _die_with_parent, database_url

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 1_500
NO_ANSWER = STRANDED  # "no answer recorded: the request deciding it stopped"

# The request of the process that dies: a v2 POST through Django's test client, in a process
# of its own (argv: the API key, the Idempotency-Key, the path after /TX/v2, the JSON body).
REQUEST = """
import sys
import django

django.setup()
from django.test import Client

key, idempotency_key, path, body = sys.argv[1:5]
Client(REMOTE_ADDR="127.0.0.1").post(
    "/TX/v2" + path,
    data=body,
    content_type="application/json",
    headers={"x-api-key": key, "Idempotency-Key": idempotency_key},
)
print("answered")  # never reached: killed while the program thinks
"""


@pytest.fixture
def program():
    program = Program(answer=APPROVE, delay=10)  # thinks far longer than the process lives
    yield program
    program.stop()


def killed_mid_decision(api, program, f, key: str) -> str:
    """Start the authorization's request in a separate process, SIGKILL it once the program has
    received the call, and return the authorization it left."""
    body = {"cardId": f.card_id, "amount": AMOUNT, "currency": "EUR", "type": "Goods"}
    killed_mid_call(api, program, key, "/card-authorizations", {**body, "merchant": MERCHANT})
    [authorization] = Authorization.objects.filter(card_id=f.card_id)
    return authorization.pk


def killed_mid_call(api, program, key: str, path: str, body: dict) -> None:
    """POST `body` to the v2 `path` with `key` in a separate process, and SIGKILL it once the
    program has received a call."""
    process = subprocess.Popen(  # noqa: S603 (our own interpreter and script)
        [sys.executable, "-c", REQUEST, api.key, key, path, json.dumps(body)],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url(),
            "ALLOWED_HOSTS": "testserver",
            "LOG_LEVEL": "WARNING",
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )
    try:
        called = program.called.wait(60)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate(timeout=30)
    assert called, f"the program was never called:\n{err.decode()[-3000:]}"
    assert process.returncode == -signal.SIGKILL
    assert b"answered" not in out


def resolve(now) -> int:
    """The recovery as the job runs it (its batches committing as they go), at `now`."""
    return operations.run_batches(authorizations_resolve_stranded, actor=SYSTEM, now=now)


def command() -> str:
    out = StringIO()
    call_command("resolve_stranded_authorizations", stdout=out)
    return out.getvalue().strip()


def retry(api, card_id: str, key: str):
    body = {"cardId": card_id, "amount": AMOUNT, "currency": "EUR", "type": "Goods"}
    return api.post("/card-authorizations", {**body, "merchant": MERCHANT}, idempotency_key=key)


def event_types(api, object_id: str) -> list[str]:
    return [e["type"] for e in reversed(items_of(api, "/events", objectId=object_id, limit=100))]


def assert_left_awaiting(api, f, authorization_id: str, key: str) -> Authorization:
    """What the dead process left: the hold, the usage, the record without its answer; a retry
    meanwhile is told the key is in use."""
    left = Authorization.objects.select_related("hold").get(pk=authorization_id)
    assert left.decision == Authorization.Decision.AWAITING_PROGRAM
    assert left.hold.status == "active" and left.hold.amount == AMOUNT
    shown = authorization_of(api, authorization_id)
    assert (shown["status"], shown["decidedAt"], shown["program"]["latencyMs"]) == (
        "awaiting_program",
        None,
        None,
    )
    assert balances(api, f.account_id) == money(START, AMOUNT)
    assert usage(api, f.card_id) == (AMOUNT, 0, AMOUNT)
    record = IdempotencyRecord.objects.get(key=key)
    assert (record.status_code, record.resource_id) == (None, authorization_id)
    in_use = retry(api, f.card_id, key)
    assert in_use.status_code == 409, in_use.content
    assert in_use.json()["code"] == "idempotency_key_in_use"
    assert event_types(api, authorization_id) == []
    return left


def assert_a_late_answer_changes_nothing(authorization_id: str) -> None:
    before = Authorization.objects.get(pk=authorization_id)
    late = Authorization.objects.select_related("decisioning_endpoint").get(pk=authorization_id)
    with operations.operation(SYSTEM):
        decided = authorization_decide(
            authorization=late,
            result=CallResult(ok=True, status=200, latency_ms=9_000, answer={"approved": False}),
        )
    after = Authorization.objects.get(pk=authorization_id)
    assert decided.decision == before.decision == after.decision
    fields = ("decided_by", "decided_at", "hold_id", "program_error", "program_answer", "amount")
    assert [getattr(after, name) for name in fields] == [getattr(before, name) for name in fields]


def assert_retries_answer_the_decision(api, card_id: str, key: str, authorization_id: str):
    first = retry(api, card_id, key)
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["authorizationId"] == authorization_id
    second = retry(api, card_id, key)
    assert second.status_code == 201
    assert second.content == first.content
    assert second["Idempotent-Replayed"] == "true"
    return body


def test_a_killed_request_is_approved_by_the_job_once(api_v2, program):
    create_endpoint(api_v2, url=program.url, onFailure="approve", timeoutMs=3000)
    f = funded(api_v2)
    key = str(uuid.uuid4())
    authorization_id = killed_mid_decision(api_v2, program, f, key)
    left = assert_left_awaiting(api_v2, f, authorization_id, key)

    # Not yet stranded: an answer may still come (the longest call and a margin).
    assert resolve(now=left.created_at + STRANDED_AFTER) == 0
    assert Authorization.objects.get(pk=authorization_id).awaiting_program

    # The command (what the job runs), once the authorization is old enough.
    Authorization.objects.filter(pk=authorization_id).update(
        created_at=left.created_at - STRANDED_AFTER - timedelta(seconds=1)
    )
    assert command() == "Decided 1 stranded card authorization(s) and 0 increment(s)."
    # Run again, by the job and the command: nothing left to decide.
    assert tasks.resolve_stranded_authorizations(timestamp=0) == {
        "authorizations": 0,
        "increments": 0,
    }
    assert command() == "Decided 0 stranded card authorization(s) and 0 increment(s)."

    decided = authorization_of(api_v2, authorization_id)
    assert (decided["status"], decided["approved"], decided["decidedBy"]) == (
        "pending",
        True,
        "standin",
    )
    assert decided["program"]["error"] == NO_ANSWER
    assert decided["program"]["answer"] is None
    assert hold_of(api_v2, decided["holdId"])["status"] == "active"
    assert decided["transactionId"] is not None
    assert event_types(api_v2, authorization_id) == [
        "authorization.approved",
        "authorization.stood_in",
    ]
    [stood_in] = event_data(api_v2, "authorization.stood_in", authorization_id)
    assert (stood_in["onFailure"], stood_in["error"]) == ("approve", NO_ANSWER)

    assert_a_late_answer_changes_nothing(authorization_id)
    assert event_types(api_v2, authorization_id) == [
        "authorization.approved",
        "authorization.stood_in",
    ]
    body = assert_retries_answer_the_decision(api_v2, f.card_id, key, authorization_id)
    assert (body["approved"], body["decidedBy"]) == (True, "standin")
    assert balances(api_v2, f.account_id) == money(START, AMOUNT)
    assert usage(api_v2, f.card_id) == (AMOUNT, 0, AMOUNT)
    assert len(program.calls) == 1
    assert verify_ledger() == LEDGER_OK


def test_a_killed_request_is_declined_by_the_job_and_gives_everything_back(api_v2, program):
    create_endpoint(api_v2, url=program.url, onFailure="decline", timeoutMs=3000)
    f = funded(api_v2)
    key = str(uuid.uuid4())
    authorization_id = killed_mid_decision(api_v2, program, f, key)
    left = assert_left_awaiting(api_v2, f, authorization_id, key)

    later = left.created_at + STRANDED_AFTER + timedelta(seconds=1)
    assert resolve(now=later) == 1
    assert resolve(now=later) == 0

    decided = authorization_of(api_v2, authorization_id)
    assert (decided["status"], decided["declineCode"], decided["decidedBy"]) == (
        "declined",
        "program_unavailable",
        "standin",
    )
    assert decided["declineDetails"] == {"error": NO_ANSWER}
    assert hold_of(api_v2, decided["holdId"])["status"] == "released"
    assert decided["transactionId"] is None
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    assert event_types(api_v2, authorization_id) == [
        "authorization.declined",
        "authorization.stood_in",
    ]

    assert_a_late_answer_changes_nothing(authorization_id)
    assert event_types(api_v2, authorization_id) == [
        "authorization.declined",
        "authorization.stood_in",
    ]
    body = assert_retries_answer_the_decision(api_v2, f.card_id, key, authorization_id)
    assert (body["approved"], body["declineCode"]) == (False, "program_unavailable")
    assert balances(api_v2, f.account_id) == money(START)
    assert verify_ledger() == LEDGER_OK


def test_the_job_deciding_first_wins_over_the_programs_late_answer(api_v2):
    """The recovery decides an authorization whose request is alive and still waiting (its
    program slower than the job's patience): when the program's approval arrives, the request
    finds it decided and answers that, once; nothing is released or evented twice."""
    program = Program(answer=APPROVE, delay=1.5)
    try:
        create_endpoint(api_v2, url=program.url, onFailure="decline", timeoutMs=3000)
        f = funded(api_v2)
        key = str(uuid.uuid4())
        waiting = InThread(api_v2, lambda client: retry(client, f.card_id, key))
        assert program.called.wait(10), "the program was never called"
        [left] = Authorization.objects.filter(card_id=f.card_id)
        assert left.awaiting_program

        assert resolve(now=left.created_at + STRANDED_AFTER + timedelta(seconds=1)) == 1
        assert waiting.alive()  # the job did not wait for the request
        answered = waiting.result()
    finally:
        program.stop()

    assert answered.status_code == 201, answered.content
    body = answered.json()
    assert (body["authorizationId"], body["declineCode"], body["decidedBy"]) == (
        left.pk,
        "program_unavailable",
        "standin",
    )
    assert (body["program"]["error"], body["program"]["answer"]) == (NO_ANSWER, None)
    assert event_types(api_v2, left.pk) == ["authorization.declined", "authorization.stood_in"]
    again = retry(api_v2, f.card_id, key)
    assert (again.status_code, again.content) == (201, answered.content)
    assert hold_of(api_v2, body["holdId"])["status"] == "released"
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    assert verify_ledger() == LEDGER_OK
