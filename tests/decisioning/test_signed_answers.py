"""Signed answers (issue 47 item 1; docs/decisioning.md, "Signed answers"), over HTTP against a
real program on loopback (tests/decisioning/helpers.py: it signs as the docs' signer does) and
real transactions: a signed answer is obeyed, with the previous secret too while a rotation's
overlap lasts; an unsigned answer, one signed with a wrong secret, for another message id, with
an old timestamp, or a signed answer recorded for another authorization and replayed, is a
failure: decided by the endpoint's `onFailure`, recorded on the authorization (or increment),
counted by the breaker and the metrics as failed, reported by the self-test. An endpoint's
`acceptUnsignedAnswers` takes an unsigned answer and never a wrongly signed one."""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from core.metrics import REGISTRY
from core.outbound import transport
from decisioning.models import DecisioningEndpoint
from decisioning.services import SIGNATURE_HEADERS
from tests.accounts.api.helpers import resource
from tests.authorizations.helpers import (
    START,
    authorize,
    balances,
    created,
    event_data,
    funded,
    hold_of,
    money,
    usage,
)
from tests.decisioning.helpers import (
    OTHER_ID,
    SIGNED,
    STALE,
    UNSIGNED,
    WRONG_SECRET,
    Program,
    Reply,
    create_endpoint,
)
from tests.decisioning.test_increments import FIRST, MORE, pending, raise_by

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 1_500
UNSIGNED_ANSWER = (
    "unsigned answer: no webhook-signature (the program signs its answer with the endpoint's "
    "secret: docs/decisioning.md)"
)
INVALID_SIGNATURE = (
    "invalid signature: no signature of the answer verifies with the endpoint's secret"
)
STALE_ANSWER = "stale answer: webhook-timestamp is more than 5 minutes from TX's clock"
REPLAYED_ANSWER = "replayed answer: signed for another message, not this request's webhook-id"
REPLAY = "replay"  # the program sends again, byte for byte, the answer it signed before

# How the program answers -> what TX records. Five in a row: the fifth degrades the endpoint.
REFUSED = {
    UNSIGNED: UNSIGNED_ANSWER,
    WRONG_SECRET: INVALID_SIGNATURE,
    OTHER_ID: REPLAYED_ANSWER,
    STALE: STALE_ANSWER,
    REPLAY: REPLAYED_ANSWER,
}


@pytest.fixture
def program():
    program = Program()
    yield program
    program.stop()


def decide(api, card_id: str) -> dict:
    return created(authorize(api, card_id, AMOUNT), "v2")


def failed_calls(mode: str = "live") -> float:
    value = REGISTRY.get_sample_value(
        "tx_decisioning_calls_total", {"mode": mode, "outcome": "failed"}
    )
    return value or 0.0


def answer_as(program: Program, how: str, recorded: Reply) -> None:
    """Make the program answer `how`: a signing of `helpers`, or REPLAY of `recorded`."""
    program.replay = recorded if how == REPLAY else None
    program.signing = SIGNED if how == REPLAY else how


def consecutive_failures(endpoint_id: str) -> int:
    return DecisioningEndpoint.objects.get(pk=endpoint_id).consecutive_failures


def docs_program(secret: str, monkeypatch) -> dict:
    """The verifier and the signer of docs/decisioning.md, run as they are written there (the
    Python blocks from "Verifying TX's request" to "Signed answers"' table)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "decisioning.md").read_text()
    section = text[text.index("### Verifying TX's request") : text.index("| the answer |")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2
    assert all(len(block.strip().splitlines()) <= 16 for block in blocks)  # short, as promised
    monkeypatch.setenv("TX_DECISIONING_SECRET", secret)
    namespace: dict = {}
    for block in blocks:
        exec(block, namespace)  # noqa: S102 (the docs' own code, read from the repository)
    return namespace


# --- signed: obeyed
def test_a_signed_answer_is_obeyed_and_signed_as_the_docs_say(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="decline")
    f = funded(api_v2)

    body = decide(api_v2, f.card_id)

    assert (body["approved"], body["decidedBy"]) == (True, "program")
    assert (body["program"]["error"], body["program"]["answer"]) == (None, {"approved": True})
    # The answer the program sent: the request's message id, signed over the body with the
    # endpoint's secret (what any Standard Webhooks library verifies).
    [reply] = program.replies
    assert reply.headers["webhook-id"] == body["authorizationId"]
    assert Webhook(endpoint["secret"]).verify(reply.body, reply.headers) == {"approved": True}

    program.answer = (200, b'{"approved": false, "declineCode": "jit_no_funds"}')
    declined = decide(api_v2, f.card_id)

    assert (declined["declineCode"], declined["decidedBy"]) == ("program_declined", "program")
    assert declined["declineDetails"] == {"programDeclineCode": "jit_no_funds"}
    assert balances(api_v2, f.account_id) == money(START, AMOUNT)


def test_the_previous_secret_signs_answers_while_the_overlap_lasts(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="decline")
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    old = endpoint["secret"]
    new = created(api_v2.post(f"{path}/secret-rotations", {"overlapSeconds": 3600}), "v2")
    f = funded(api_v2, load=10 * AMOUNT)

    # The program has not switched yet: its answers signed with the old secret are taken.
    assert program.secret == old
    assert decide(api_v2, f.card_id)["decidedBy"] == "program"
    program.secret = new["secret"]
    assert decide(api_v2, f.card_id)["decidedBy"] == "program"

    # The overlap over, the old secret signs nothing TX takes.
    program.secret = old
    DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(
        previous_secret_expires_at=timezone.now() - timedelta(seconds=1)
    )
    refused = decide(api_v2, f.card_id)

    assert (refused["decidedBy"], refused["declineCode"]) == ("standin", "program_unavailable")
    assert refused["program"]["error"] == INVALID_SIGNATURE
    program.secret = new["secret"]
    assert decide(api_v2, f.card_id)["decidedBy"] == "program"


def test_the_docs_verifier_and_signer_work_against_tx(api_v2, program, monkeypatch):
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="decline")
    docs = docs_program(endpoint["secret"], monkeypatch)

    def answer(message_id: str) -> Reply:
        body, headers = docs["signed_answer"]({"approved": True}, {"webhook-id": message_id})
        return Reply(200, headers, body)

    program.reply_to = answer
    f = funded(api_v2)

    body = decide(api_v2, f.card_id)

    assert (body["decidedBy"], body["program"]["error"]) == ("program", None)
    [call] = program.calls
    assert docs["verified_request"](call.body, call.headers)["id"] == body["authorizationId"]
    # The verifier refuses what TX did not sign.
    with pytest.raises(WebhookVerificationError):
        docs["verified_request"](call.body + b" ", call.headers)


# --- refused: onFailure decides, recorded as a failure
@pytest.mark.parametrize("on_failure", ["decline", "standin", "approve"])
def test_each_unsigned_or_wrongly_signed_answer_is_decided_by_on_failure(
    api_v2, program, on_failure
):
    """One test per `onFailure` (each transactional test costs a database flush): a signed
    answer first (the one replayed last), then each refused answer in turn, five failures in a
    row that degrade the endpoint at the fifth."""
    endpoint_id = create_endpoint(api_v2, url=program.url, onFailure=on_failure)["endpointId"]
    f = funded(api_v2, load=10 * AMOUNT)
    first = decide(api_v2, f.card_id)
    assert first["decidedBy"] == "program"
    [recorded] = program.replies
    held = AMOUNT  # what the account holds: the first, then each approval in the program's stead

    for count, (how, error) in enumerate(REFUSED.items(), start=1):
        answer_as(program, how, recorded)
        failed_before = failed_calls()

        body = decide(api_v2, f.card_id)

        assert len(program.calls) == count + 1, how
        assert body["decidedBy"] == "standin", how
        # Recorded as a failure: why, the status the program answered, no answer taken.
        assert body["program"]["error"] == error, how
        assert (body["program"]["status"], body["program"]["answer"]) == (200, None), how
        [stood_in] = event_data(api_v2, "authorization.stood_in", body["authorizationId"])
        assert (stood_in["onFailure"], stood_in["error"]) == (on_failure, error), how
        assert failed_calls() == failed_before + 1, how
        assert consecutive_failures(endpoint_id) == count, how
        if on_failure == "decline":
            assert (body["approved"], body["declineCode"]) == (False, "program_unavailable"), how
            assert body["declineDetails"] == {"error": error}, how
            assert hold_of(api_v2, body["holdId"])["status"] == "released", how
        else:
            assert (body["approved"], body["declineCode"]) == (True, None), how
            assert hold_of(api_v2, body["holdId"])["status"] == "active", how
            held += AMOUNT
        assert balances(api_v2, f.account_id) == money(10 * AMOUNT, held), how
        assert usage(api_v2, f.card_id)[0] == held, how

    stored = DecisioningEndpoint.objects.get(pk=endpoint_id)
    assert stored.degraded_at is not None  # the breaker counted each as a failure


def test_unsigned_answers_are_taken_only_with_the_endpoints_setting(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="decline")
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    f = funded(api_v2, load=20 * AMOUNT)
    recorded_for = decide(api_v2, f.card_id)["authorizationId"]
    [recorded] = program.replies
    program.signing = UNSIGNED
    assert decide(api_v2, f.card_id)["program"]["error"] == UNSIGNED_ANSWER

    assert resource(api_v2.patch(path, {"acceptUnsignedAnswers": True}), "v2")[
        "acceptUnsignedAnswers"
    ]
    taken = decide(api_v2, f.card_id)

    assert (taken["approved"], taken["decidedBy"]) == (True, "program")
    assert (taken["program"]["error"], taken["program"]["answer"]) == (None, {"approved": True})
    assert [reply.headers for reply in program.replies[-1:]] == [{}]

    # Never a wrong signature: each refused as without the setting.
    for how, error in REFUSED.items():
        if how == UNSIGNED:
            continue
        answer_as(program, how, recorded)
        DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(consecutive_failures=0)
        body = decide(api_v2, f.card_id)
        assert (body["decidedBy"], body["declineCode"]) == ("standin", "program_unavailable"), how
        assert body["program"]["error"] == error, how
    assert program.replies[-1].headers["webhook-id"] == recorded_for

    # A signature header that is there but broken is no unsigned answer either.
    timestamp = recorded.headers["webhook-timestamp"]
    broken = {
        "no id nor timestamp": (
            {"webhook-signature": recorded.headers["webhook-signature"]},
            "invalid signature: webhook-id and webhook-timestamp must come with the signature",
        ),
        "not base64": (
            {**recorded.headers, "webhook-signature": "v1,!!!"},
            INVALID_SIGNATURE,
        ),
        "no version": ({**recorded.headers, "webhook-signature": "garbage"}, INVALID_SIGNATURE),
        "a timestamp with a fraction": (
            {**recorded.headers, "webhook-timestamp": timestamp + ".000"},
            "invalid signature: webhook-timestamp must be Unix time in seconds",
        ),
    }
    for name, (headers, error) in broken.items():
        program.replay = Reply(200, headers, recorded.body)
        DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(consecutive_failures=0)
        body = decide(api_v2, f.card_id)
        assert (body["decidedBy"], body["program"]["error"]) == ("standin", error), name


# --- increments
@pytest.mark.parametrize("on_failure", ["decline", "standin"])
def test_an_increments_answer_is_signed_for_the_increment(api_v2, program, on_failure):
    """The authorization's signed answer, replayed for its increment, is refused like every
    other answer not signed for the increment's id."""
    f, auth, endpoint = pending(api_v2, program, onFailure=on_failure)
    [recorded] = program.replies  # the authorization's approval, signed for its id
    total = FIRST  # what the authorization holds: it grows by each increment approved

    body = raise_by(api_v2, auth["authorizationId"])
    assert (body["decision"], body["decidedBy"]) == ("approved", "program")
    total += MORE

    for how, error in REFUSED.items():
        answer_as(program, how, recorded)
        DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(consecutive_failures=0)

        body = raise_by(api_v2, auth["authorizationId"])

        assert body["decidedBy"] == "standin", how
        assert (body["program"]["error"], body["program"]["status"]) == (error, 200), how
        assert body["program"]["answer"] is None, how
        [stood_in] = [
            event
            for event in event_data(api_v2, "authorization.stood_in", auth["authorizationId"])
            if event.get("incrementId") == body["incrementId"]
        ]
        assert (stood_in["onFailure"], stood_in["error"]) == (on_failure, error), how
        if on_failure == "decline":
            assert (body["decision"], body["declineCode"]) == ("declined", "program_unavailable")
        else:
            assert (body["decision"], body["declineCode"]) == ("approved", None), how
            total += MORE
        assert body["authorization"]["amount"] == total, how
        # A refused increment declined gave its hold and usage back; one approved kept them.
        assert balances(api_v2, f.account_id) == money(START, total), how
        assert usage(api_v2, f.card_id)[0] == total, how


# --- the self-test
def test_the_self_test_reports_what_the_signature_is_worth(api_v2, program, settings):
    settings.DECISIONING_SELF_TESTS_PER_KEY = 20
    endpoint = create_endpoint(api_v2, url=program.url)
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"

    def self_test() -> dict:
        return resource(api_v2.post(f"{path}/tests", {}), "v2")

    good = self_test()
    assert (good["ok"], good["status"], good["error"]) == (True, 200, None)
    [recorded] = program.replies
    assert recorded.headers["webhook-id"] == program.calls[0].headers["webhook-id"]

    for how, error in REFUSED.items():
        answer_as(program, how, recorded)
        result = self_test()
        assert (result["ok"], result["status"], result["error"]) == (False, 200, error), how

    # The setting takes an unsigned answer, and nothing wrongly signed.
    api_v2.patch(path, {"acceptUnsignedAnswers": True})
    answer_as(program, UNSIGNED, recorded)
    assert self_test()["ok"] is True
    answer_as(program, WRONG_SECRET, recorded)
    assert self_test()["error"] == INVALID_SIGNATURE
    # The self-test changes nothing: the breaker neither.
    assert consecutive_failures(endpoint["endpointId"]) == 0


# --- the transport: the answer's signature headers, bounded
def test_the_transport_keeps_only_the_headers_asked_for_and_bounds_them(program):
    long_signature = "v1," + "a" * 5_000
    program.replay = Reply(
        200,
        {"webhook-id": "auth_1", "webhook-signature": long_signature, "x-other": "kept? no"},
        json.dumps({"approved": True}).encode(),
    )

    outcome = transport.post(
        program.url,
        body=b"{}",
        headers={},
        timeout=2,
        max_response_bytes=32 * 1024,
        keep_headers=SIGNATURE_HEADERS,
    )

    assert outcome.status_code == 200
    # Only what was asked for and sent (no webhook-timestamp came), each value cut.
    assert outcome.headers == {
        "webhook-id": "auth_1",
        "webhook-signature": long_signature[: transport.MAX_KEPT_HEADER_CHARS],
    }
    # A caller that asks for none (webhook deliveries) keeps none.
    assert (
        transport.post(
            program.url, body=b"{}", headers={}, timeout=2, max_response_bytes=32 * 1024
        ).headers
        == {}
    )
