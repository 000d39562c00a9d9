"""Just-in-time funding (issue 47 item 3; docs/decisioning.md, "Just-in-time funding"), over
HTTP against a real program on loopback: the program is asked before TX's funds check, its
approval moves the money from its funding account to the cardholder's and holds it in one
transaction; a decline or no answer funds nothing; a reversal, a presentment below the hold, a
refund and an expiry give it back by the same path; what the funding account lacks is never
lent; a crash between the call and the funding is decided by the stranded job; verify_ledger
checks every step."""

import pytest
from django.utils import timezone

from accounts.models import Account
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from authorizations.services import authorizations_resolve_stranded
from authorizations.services.program import STRANDED_AFTER
from tests.authorizations.helpers import (
    authorization_of,
    authorize,
    awaiting_program,
    balances,
    card_lines,
    card_return,
    created,
    expire_holds,
    funded,
    increment,
    money,
    past_due,
    present,
    reverse,
    usage,
)
from tests.decisioning.helpers import APPROVE, FAIL, InThread, Program, create_endpoint

pytestmark = pytest.mark.django_db(transaction=True)

DECLINE = (200, b'{"approved": false, "declineCode": "no_balance"}')


@pytest.fixture
def program():
    program = Program()
    yield program
    program.stop()


def prefund(api, amount: int, direction: str = "credit"):
    body = {"currency": "EUR", "direction": direction, "amount": amount}
    return api.post("/program-funding-accounts/adjustments", body)


def funding(api) -> dict:
    """The program's EUR funding account as the API shows it."""
    [account] = api.get("/program-funding-accounts").json()["data"]
    return account


def funding_available(api) -> int:
    return funding(api)["balances"]["available"]


def decide(api, card_id, amount, **fields) -> dict:
    return created(authorize(api, card_id, amount, **fields), api.version)


def jit_world(api, program, *, prefunded: int = 10_000, on_failure: str = "decline"):
    """A cardholder whose account holds nothing, a JIT program answering through `program`,
    and its funding account with `prefunded`."""
    endpoint = create_endpoint(api, url=program.url, mode="jit", onFailure=on_failure)
    assert created(prefund(api, prefunded), api.version)["amount"] == prefunded
    return endpoint, funded(api, load=0)


def assert_ledger_ok():
    assert ledger_breaches() == []


def test_the_program_funds_what_it_approves_and_gets_back_what_the_payment_no_longer_needs(
    api_v2, program
):
    program.answer = APPROVE
    _, f = jit_world(api_v2, program)

    body = decide(api_v2, f.card_id, 1_500)

    assert (body["approved"], body["decidedBy"], body["amount"]) == (True, "program", 1_500)
    assert body["programFunding"] == {"funded": 1_500, "returned": 0}
    [call] = program.calls
    # Asked before any funds check, on an account that holds nothing.
    assert (call.payload["mode"], call.payload["account"]["available"]) == ("jit", 0)
    assert call.payload["authorization"]["partialApproval"] is False
    assert balances(api_v2, f.account_id) == money(1_500, 1_500)
    assert funding_available(api_v2) == 8_500
    funded_line, purchase = sorted(card_lines(api_v2, f.card_id), key=lambda line: line["type"])
    assert (funded_line["type"], funded_line["amount"], funded_line["description"]) == (
        "CashInc",
        1_500,
        "Funded by the card program",
    )
    assert (purchase["type"], purchase["settlementStatus"]) == ("Goods", "Unsettled")
    assert_ledger_ok()

    # Presented in two parts for less than held: the rest goes back to the program.
    presentments = f"/card-authorizations/{body['authorizationId']}/presentments"
    assert api_v2.post(presentments, {"amount": 600, "final": False}).status_code == 201
    assert authorization_of(api_v2, body["authorizationId"])["programFunding"]["returned"] == 0
    presented = api_v2.post(presentments, {"amount": 400})
    assert presented.status_code == 201, presented.content
    assert authorization_of(api_v2, body["authorizationId"])["programFunding"] == {
        "funded": 1_500,
        "returned": 500,
    }
    assert balances(api_v2, f.account_id) == money(0)
    assert funding_available(api_v2) == 9_000
    assert_ledger_ok()

    # A refund of that payment goes back to the program too.
    card_return(api_v2, f.card_id, 300, authorization_id=body["authorizationId"])
    assert balances(api_v2, f.account_id) == money(0)
    assert funding_available(api_v2) == 9_300
    assert authorization_of(api_v2, body["authorizationId"])["programFunding"]["returned"] == 800

    # A reversal gives all of it back; an expiry as well.
    reversed_ = decide(api_v2, f.card_id, 2_000)
    assert funding_available(api_v2) == 7_300
    assert reverse(api_v2, reversed_["authorizationId"]).status_code == 201
    expired = decide(api_v2, f.card_id, 700)
    past_due(expired["holdId"])
    expire_holds()
    assert funding_available(api_v2) == 9_300
    assert balances(api_v2, f.account_id) == money(0)
    assert usage(api_v2, f.card_id)[0] == 1_000  # what was presented
    assert_ledger_ok()


def test_a_presentment_above_the_hold_is_funded_by_the_program_too(api_v2, program):
    program.answer = APPROVE
    _, f = jit_world(api_v2, program, prefunded=1_100)
    body = decide(api_v2, f.card_id, 1_000)

    too_much = present(api_v2, body["authorizationId"], 1_150)  # within 20 %: a tip
    assert too_much.status_code == 422, too_much.content
    assert too_much.json()["code"] == "insufficient_funds"  # the program has 100 left
    assert funding_available(api_v2) == 100
    prefund(api_v2, 50)
    assert present(api_v2, body["authorizationId"], 1_150).status_code == 201

    assert authorization_of(api_v2, body["authorizationId"])["programFunding"] == {
        "funded": 1_150,
        "returned": 0,
    }
    assert (funding_available(api_v2), balances(api_v2, f.account_id)) == (0, money(0))
    assert_ledger_ok()


def test_a_decline_or_no_answer_funds_nothing_and_on_failure_decides(api_v2, program):
    endpoint, f = jit_world(api_v2, program, on_failure="decline")

    program.answer = DECLINE
    declined = decide(api_v2, f.card_id, 1_500)
    assert (declined["declineCode"], declined["decidedBy"]) == ("program_declined", "program")
    assert declined["holdId"] is None and declined["programFunding"] is None

    program.answer = FAIL
    unanswered = decide(api_v2, f.card_id, 1_500)
    assert (unanswered["declineCode"], unanswered["decidedBy"]) == (
        "program_unavailable",
        "standin",
    )
    assert (funding_available(api_v2), balances(api_v2, f.account_id)) == (10_000, money(0))
    assert usage(api_v2, f.card_id) == (0, 0, 0)

    # `standin`: TX's ledger decides, on the account's own money (none, then some).
    patch = api_v2.patch(
        f"/decisioning-endpoints/{endpoint['endpointId']}", {"onFailure": "standin"}
    )
    assert patch.status_code == 200
    assert decide(api_v2, f.card_id, 1_500)["declineCode"] == "insufficient_funds"
    api_v2.post(
        f"/accounts/{f.account_id}/adjustments",
        {"direction": "credit", "amount": 2_000, "currency": "EUR"},
    )
    own = decide(api_v2, f.card_id, 1_500)
    assert (own["approved"], own["decidedBy"], own["programFunding"]) == (True, "standin", None)
    assert balances(api_v2, f.account_id) == money(2_000, 1_500)

    # `approve`: approved whatever the account has, as the network's stand-in is: the hold is
    # forced, what it takes beyond the account's money is `overdrawnBy`; still nothing funded.
    patch = api_v2.patch(
        f"/decisioning-endpoints/{endpoint['endpointId']}", {"onFailure": "approve"}
    )
    assert patch.status_code == 200
    forced = decide(api_v2, f.card_id, 800)
    assert (forced["approved"], forced["decidedBy"], forced["overdrawnBy"]) == (
        True,
        "standin",
        300,
    )
    assert forced["programFunding"] is None
    assert funding_available(api_v2) == 10_000
    assert len(program.calls) == 5
    assert_ledger_ok()


def test_the_program_is_never_lent_the_banks_money(api_v2, program):
    """A funding account with less than the approved payment: declined
    `insufficient_program_funds`, nothing funded, unless the institution grants the program
    that credit (`overdraftLimit`)."""
    program.answer = APPROVE
    _, f = jit_world(api_v2, program, prefunded=1_000)

    short = decide(api_v2, f.card_id, 1_500)
    assert (short["approved"], short["declineCode"], short["decidedBy"]) == (
        False,
        "insufficient_program_funds",
        "tx",
    )
    assert short["declineDetails"] == {"available": 1_000, "amount": 1_500}
    assert (funding_available(api_v2), usage(api_v2, f.card_id)) == (1_000, (0, 0, 0))

    account_id = funding(api_v2)["accountId"]
    granted = api_v2.patch(f"/program-funding-accounts/{account_id}", {"overdraftLimit": 500})
    assert granted.status_code == 200, granted.content
    assert decide(api_v2, f.card_id, 1_500)["approved"] is True
    shown = funding(api_v2)
    assert (shown["balances"]["posted"], shown["balances"]["available"]) == (-500, 0)
    assert shown["overdraftLimit"] == 500

    # The credit cannot be taken away below what is used, nor money drawn beyond it.
    refused = api_v2.patch(f"/program-funding-accounts/{account_id}", {"overdraftLimit": 0})
    assert refused.status_code == 422, refused.content
    assert prefund(api_v2, 1, direction="debit").json()["code"] == "insufficient_funds"
    # PostgreSQL holds the floor whatever writes the row.
    with pytest.raises(Exception, match="account_program_funding_nonneg"):
        Account.objects.filter(pk=account_id).update(overdraft_limit=0)
    assert_ledger_ok()


def test_a_crash_between_the_call_and_the_funding_is_decided_by_the_stranded_job(api_v2):
    """The request died after its first commit (nothing held, the usage counted): the job
    decides it by `onFailure` (`standin`: TX's ledger, on an account that holds nothing),
    funds nothing and gives the usage back."""
    f = funded(api_v2, load=0)
    prefund(api_v2, 10_000)
    awaiting = awaiting_program(api_v2, f.card_id, 1_500, mode="jit")
    assert (awaiting["status"], awaiting["holdId"]) == ("awaiting_program", None)
    assert usage(api_v2, f.card_id)[0] == 1_500

    assert authorizations_resolve_stranded(now=timezone.now() + STRANDED_AFTER) == 1

    decided = authorization_of(api_v2, awaiting["authorizationId"])
    assert (decided["declineCode"], decided["decidedBy"]) == ("insufficient_funds", "standin")
    assert decided["programFunding"] is None
    assert (funding_available(api_v2), usage(api_v2, f.card_id)) == (10_000, (0, 0, 0))
    assert Authorization.objects.get(pk=awaiting["authorizationId"]).hold_id is None
    assert_ledger_ok()


def test_an_increment_of_a_funded_payment_is_funded_when_approved(api_v2, program):
    program.answer = APPROVE
    _, f = jit_world(api_v2, program)
    body = decide(api_v2, f.card_id, 1_000)

    more = created(increment(api_v2, body["authorizationId"], 400), "v2")
    assert (more["approved"], more["decidedBy"]) == (True, "program")
    program.answer = DECLINE
    less = created(increment(api_v2, body["authorizationId"], 300), "v2")
    assert (less["approved"], less["declineCode"]) == (False, "program_declined")

    standing = authorization_of(api_v2, body["authorizationId"])
    assert (standing["amount"], standing["programFunding"]) == (
        1_400,
        {"funded": 1_400, "returned": 0},
    )
    assert balances(api_v2, f.account_id) == money(1_400, 1_400)
    assert (funding_available(api_v2), usage(api_v2, f.card_id)[0]) == (8_600, 1_400)
    assert_ledger_ok()


def test_payments_racing_for_the_last_of_the_programs_money(api_v2, program, settings):
    """Eight authorizations at once, each of 1,000, against a funding account of 5,000: five
    are funded, three declined `insufficient_program_funds`; the account never goes below
    zero (its row is locked for each funding, and PostgreSQL's CHECK holds the floor)."""
    settings.DECISIONING_CALLS_PER_INSTITUTION = 16
    program.answer = APPROVE
    _, f = jit_world(api_v2, program, prefunded=5_000)
    cards = [f.card_id] + [funded(api_v2, load=0, first=f"C{i}").card_id for i in range(7)]

    threads = [
        InThread(api_v2, lambda client, card=card: decide(client, card, 1_000)) for card in cards
    ]
    results = [thread.result() for thread in threads]

    codes = sorted(str(body["declineCode"]) for body in results)
    assert codes == ["None"] * 5 + ["insufficient_program_funds"] * 3
    assert funding_available(api_v2) == 0
    assert_ledger_ok()
