"""The self-test against a real program on loopback (an http.server thread), with real
transactions: a signed `decisioning.test` request answered 200 JSON (ok), 500, garbage, a JSON
without a decision, late, or not at all; a refused target; no database transaction open while
TX waits; nothing written. And two threads creating the institution's endpoint at once: one
201, one 409."""

import json
import threading

import pytest
from django.db import connection, transaction
from django.test import Client
from standardwebhooks import Webhook

from api.models import IdempotencyRecord
from core.outbound.targets import REFUSED
from decisioning.models import DecisioningEndpoint
from decisioning.services import decisioning_endpoint_test
from events.models import Event
from tests.accounts.api.helpers import assert_error, created, resource
from tests.decisioning.helpers import (
    APPROVE,
    FAIL,
    GARBAGE,
    NO_DECISION,
    Program,
    create_endpoint,
    endpoint_body,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def program():
    program = Program()
    yield program
    program.stop()


def self_test(api, endpoint_id: str) -> dict:
    return resource(api.post(f"/decisioning-endpoints/{endpoint_id}/tests", {}), "v2")


def test_a_program_that_answers_a_decision_passes(api_v2, program):
    program.watch_transactions = True
    endpoint = create_endpoint(api_v2, url=program.url, timeoutMs=2000)
    before = DecisioningEndpoint.objects.get()
    events = Event.objects.count()
    records = IdempotencyRecord.objects.count()

    result = self_test(api_v2, endpoint["endpointId"])

    assert result["ok"] is True and result["status"] == 200 and result["error"] is None
    assert isinstance(result["latencyMs"], int) and 0 <= result["latencyMs"] < 2000
    [call] = program.calls
    # Signed per Standard Webhooks with the endpoint's secret, about the test.
    payload = Webhook(endpoint["secret"]).verify(call.body, call.headers)
    assert payload["type"] == "decisioning.test"
    assert payload["endpointId"] == endpoint["endpointId"]
    assert call.headers["webhook-id"] == payload["id"] and payload["id"].startswith("dct_")
    assert call.headers["content-type"] == "application/json"
    # While the program was thinking, no session of the database had a transaction open.
    assert call.open_transactions == 0
    # Nothing changed: no event, no idempotency record, the endpoint as it was.
    assert Event.objects.count() == events
    assert IdempotencyRecord.objects.count() == records
    after = DecisioningEndpoint.objects.get()
    assert (after.updated_at, after.secret_encrypted) == (
        before.updated_at,
        before.secret_encrypted,
    )


@pytest.mark.parametrize(
    ("answer", "status", "error"),
    [
        (FAIL, 500, "status 500: the endpoint must answer 2xx"),
        (
            GARBAGE,
            200,
            "invalid answer: not a JSON object with a boolean `approved` (at most 4096 characters)",
        ),
        (
            NO_DECISION,
            200,
            "invalid answer: not a JSON object with a boolean `approved` (at most 4096 characters)",
        ),
    ],
)
def test_a_wrong_answer_fails_with_its_reason(api_v2, program, answer, status, error):
    program.answer = answer
    endpoint = create_endpoint(api_v2, url=program.url)
    result = self_test(api_v2, endpoint["endpointId"])
    assert (result["ok"], result["status"], result["error"]) == (False, status, error)
    assert len(program.calls) == 1


def test_a_late_answer_is_a_timeout(api_v2, program):
    program.delay = 1.0
    endpoint = create_endpoint(api_v2, url=program.url, timeoutMs=200)
    result = self_test(api_v2, endpoint["endpointId"])
    assert (result["ok"], result["status"]) == (False, None)
    assert result["error"] == "timeout: no answer within 200 ms"
    assert 150 <= result["latencyMs"] < 900  # gave up at its deadline, not at the answer


def test_a_program_that_is_down_fails(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url)
    program.stop()
    result = self_test(api_v2, endpoint["endpointId"])
    assert (result["ok"], result["status"]) == (False, None)
    assert result["error"].startswith("connection failed")


def test_a_refused_target_gets_nothing(api_v2, program, settings):
    endpoint = create_endpoint(api_v2, url=program.url)  # saved while private targets were allowed
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    result = self_test(api_v2, endpoint["endpointId"])
    assert (result["ok"], result["status"]) == (False, None)
    assert result["error"] == f"refused: {REFUSED}"
    assert program.calls == []


def test_a_disabled_endpoint_can_be_tested(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url, enabled=False)
    assert self_test(api_v2, endpoint["endpointId"])["ok"] is True


def test_the_key_is_still_required(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url)
    response = api_v2.post(
        f"/decisioning-endpoints/{endpoint['endpointId']}/tests", {}, idempotency_key=None
    )
    assert_error(response, "v2", 400, "idempotency_key_missing")
    assert program.calls == []


def test_the_service_refuses_to_wait_inside_a_transaction(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url)
    stored = DecisioningEndpoint.objects.get(pk=endpoint["endpointId"])
    with transaction.atomic():
        with pytest.raises(RuntimeError, match="no database transaction open"):
            decisioning_endpoint_test(endpoint=stored)
    assert program.calls == []
    assert decisioning_endpoint_test(endpoint=stored).ok is True
    assert APPROVE == program.answer


# --- one endpoint per scope, under a race
def test_two_concurrent_creations_one_wins_one_conflicts(api_v2, key):
    barrier = threading.Barrier(2)
    responses: list = [None, None]
    errors: list = []

    def run(index):
        try:
            barrier.wait(timeout=10)
            responses[index] = Client(REMOTE_ADDR="127.0.0.1").post(
                "/TX/v2/decisioning-endpoints",
                data=json.dumps(endpoint_body(timeoutMs=500 + index)),
                content_type="application/json",
                headers={
                    "x-api-key": key[1],
                    "Idempotency-Key": f"{index}" * 8 + "-1111-4111-8111-111111111111",
                },
            )
        except BaseException as error:  # noqa: BLE001 - re-raised below, in the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert sorted(response.status_code for response in responses) == [201, 409]
    winner = next(r for r in responses if r.status_code == 201)
    loser = next(r for r in responses if r.status_code == 409)
    body = created(winner, "v2")
    assert_error(loser, "v2", 409, "already_exists", details={"endpointId": body["endpointId"]})
    assert list(DecisioningEndpoint.objects.values_list("pk", flat=True)) == [body["endpointId"]]
    assert Event.objects.filter(type="decisioning_endpoint.created").count() == 1
