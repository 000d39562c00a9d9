"""Recalls TX answers (issue 50 item 6; docs/payments.md, "Recalls TX answers"): the bank that
sent a SEPA credit into one of the institution's accounts recalls it (a camt.056 the partner
bank forwards), and the institution accepts it (the money goes back) or refuses it with the
EPC's reason, in a camt.029 within 15 TARGET2 business days; unanswered, TX refuses it NOAS. A
bank in the clearing (an `interbank` profile) receives the recall from the clearing and returns
an accepted recall's credit by a pacs.004 (FOCR)."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
import xmlschema
from django.utils import timezone

from accounts.models import Account, Adjustment
from accounts.services import adjustment_create
from accounts.verification import ledger_breaches
from cards.dates import today_of
from core.actors import SYSTEM
from events.models import Event
from payments import account_ibans, connector
from payments.calendar import target2_days_after
from payments.iso20022.camt029 import read_resolution
from payments.iso20022.messages import CAMT_029, PACS_004
from payments.iso20022.pacs004 import read_return
from payments.iso20022.pacs008 import read_transfers
from payments.models import InboundEntry, InboundRecall, Rail, RailFile, RailNotice
from payments.services.inbound_files import rail_file_receive
from payments.services.inbound_recalls import inbound_recalls_expire
from sandbox.simulated_bank import (
    IncomingSepa,
    simulated_sepa_bank_recall,
    simulated_sepa_bank_run,
    simulated_sepa_bank_send,
)
from sandbox.simulated_clearing import CLEARING_BIC, offer_credit, simulated_clearing_run
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.payments.helpers import rails_at
from tests.payments.test_sepa_inbound import Code, iban_of, issuing_bank, posted, rail
from tests.payments.test_sepa_interbank import BIC, LOADED, interbank_bank

pytestmark = pytest.mark.django_db


def receive(bank, names: list[str]) -> list[RailFile]:
    """The inbox's files `names` read as the payments job reads them."""
    inbox = connector.folder(bank.institution.pk, "sepa", "inbox")
    received = []
    for name in names:
        received.append(
            rail_file_receive(
                institution=bank.institution,
                rail=Rail.SEPA_CT,
                name=name,
                content=(inbox / name).read_bytes(),
            )
        )
        assert received[-1].status == RailFile.Status.APPLIED, received[-1].error
    return received


def answer(api, recall: InboundRecall, **body):
    return api.post(f"/inbound-recalls/{recall.pk}/answers", body)


def answered(recall: InboundRecall) -> tuple[str, str]:
    """The camt.029 of a recall's answer, valid against the official XSD: (its confirmation,
    the reason code)."""
    recall.refresh_from_db()
    content = bytes(recall.answer_file.content)
    assert xmlschema.XMLSchema(str(CAMT_029.xsd)).is_valid(content)
    resolution = read_resolution(content)
    (transaction,) = resolution.transactions
    assert transaction.original_end_to_end_id == recall.original_end_to_end_id
    assert resolution.recall_case_id == recall.case_id
    return resolution.status, transaction.reason.code if transaction.reason else ""


def test_recalls_of_credits_are_answered_once_with_the_money_back_or_a_reason(rails_dir):
    bank, closed, _ = issuing_bank()
    today = today_of(bank.institution)
    mine = iban_of(bank, bank.account_id)
    unknown = account_ibans._iban("LU", "999", "000000000000")
    names = [
        simulated_sepa_bank_send(
            institution=bank.institution,
            credits=[IncomingSepa(mine, 1_500), IncomingSepa(unknown, 200)],
            today=today,
        )
    ]
    assert offer_credit(iban=mine, amount=2_500, transaction_id="TX-1").status == "ACCP"
    receive(bank, names)
    booked = InboundEntry.objects.get(amount=1_500)
    held = InboundEntry.objects.get(amount=200, status="suspense")
    instant = InboundEntry.objects.get(rail=Rail.SEPA_INST)
    assert posted(bank.account_id) == 4_000

    # The sending banks recall three of them, and one TX never received.
    never = SimpleNamespace(
        rail="sepa_ct",
        sepa_agent_bic="",
        end_to_end_id="NEVER-SEEN",
        sepa_reference="",
        amount=900,
        settlement_date=today,
    )
    recalled = [
        simulated_sepa_bank_recall(
            institution=bank.institution, inbound_entry=credit, reason=reason, today=today
        )
        for credit, reason in ((booked, "DUPL"), (held, "TECH"), (instant, "FRAD"), (never, "CUST"))
    ]
    receive(bank, recalled)
    receive(bank, recalled[:1])  # the same file again: the same recall
    recalls = {each.original_amount: each for each in InboundRecall.objects.all()}
    assert len(recalls) == 4
    due = target2_days_after(today, 15)
    assert {
        amount: (each.status, each.inbound_entry_id, each.reason_code, each.answer_due)
        for amount, each in recalls.items()
    } == {
        1_500: ("received", booked.pk, "DUPL", due),
        200: ("received", held.pk, "TECH", due),
        2_500: ("received", instant.pk, "FRAD", due),
        900: ("refused", None, "CUST", due),  # at once, by TX
    }
    assert answered(recalls[900]) == ("RJCR", "NOOR")

    # Over the API, the institution's own only.
    listed = bank.api.get("/inbound-recalls?status=received").json()["data"]
    assert sorted(each["amount"] for each in listed) == [200, 1_500, 2_500]
    stranger = Api("v2", issue_key(InstitutionFactory(), scopes=["payments:write", "read"])[1])
    assert stranger.get(f"/inbound-recalls/{recalls[200].pk}").status_code == 404
    assert answer(stranger, recalls[200], accept=True).status_code == 404

    # Bad answers change nothing.
    assert answer(bank.api, recalls[200], accept=False, reasonCode="DUPL").status_code == 400
    assert answer(bank.api, recalls[200], accept=True, reasonCode="CUST").status_code == 400
    assert answer(bank.api, recalls[900], accept=True).status_code == 409  # answered already

    # Accepted: the money back to the partner bank, from the account, or from suspense.
    response = answer(bank.api, recalls[1_500], accept=True)
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == "accepted" and response.json()["refusal"] is None
    assert answer(bank.api, recalls[200], accept=True).status_code == 201
    assert posted(bank.account_id) == 2_500
    assert rail(bank, Code.RAIL_SUSPENSE) == 0
    assert (
        sorted(
            InboundEntry.objects.filter(pk__in=[booked.pk, held.pk]).values_list(
                "status", "return_code"
            )
        )
        == [("returned", "FOCR")] * 2
    )
    assert answered(recalls[1_500]) == ("CNCL", "")

    # The account no longer has the instant credit's money: accepting it is refused, and the
    # institution refuses the recall AM04.
    adjustment_create(
        account=Account.objects.get(pk=bank.account_id),
        direction=Adjustment.Direction.DEBIT,
        amount=2_000,
        currency="EUR",
        actor=SYSTEM,
    )
    short = answer(bank.api, recalls[2_500], accept=True)
    assert (short.status_code, short.json()["code"]) == (422, "insufficient_funds")
    refused = answer(bank.api, recalls[2_500], accept=False, reasonCode="AM04")
    assert refused.status_code == 201
    assert refused.json()["refusal"] == {"code": "AM04", "reason": "insufficient_funds"}
    assert answered(recalls[2_500]) == ("RJCR", "AM04")
    assert posted(bank.account_id) == 500

    # A recall left unanswered past its last day: refused NOAS by the payments job.
    late = simulated_sepa_bank_recall(
        institution=bank.institution, inbound_entry=instant, reason="CUST", today=today
    )
    receive(bank, [late])
    waiting = InboundRecall.objects.get(status="received")
    assert inbound_recalls_expire(now=timezone.now()) == 0
    assert inbound_recalls_expire(now=timezone.now() + timedelta(days=40)) == 1
    assert answered(waiting) == ("RJCR", "NOAS")

    # The job delivers the answers to the partner bank, which gives the accepted recalls'
    # money back (its notification's FOCR debits): money TX moved already, nothing more.
    rails_at(timezone.now())
    assert RailFile.objects.filter(name__contains="recall-answer", delivered_at=None).count() == 0
    notifications = simulated_sepa_bank_run(institution=bank.institution, today=today)
    before = RailNotice.objects.count()
    receive(bank, [name for name in notifications if "camt054" in name])
    assert RailNotice.objects.count() == before
    assert posted(bank.account_id) == 500 and rail(bank, Code.RAIL_SUSPENSE) == 0
    assert ledger_breaches() == []
    events = Event.objects.filter(object_id=recalls[1_500].pk).order_by("pk")
    assert [(each.type, each.actor_type) for each in events] == [
        ("inbound_recall.received", "system"),
        ("inbound_recall.accepted", "apiKey"),
    ]


def test_a_bank_in_the_clearing_returns_an_accepted_recalls_credit_by_a_pacs004(rails_dir):
    bank = interbank_bank()
    today = today_of(bank.institution)
    mine = iban_of(bank, bank.account_id)
    for amount, transaction_id in ((1_500, "TX-ACCEPTED"), (700, "TX-REFUSED")):
        assert (
            offer_credit(iban=mine, amount=amount, transaction_id=transaction_id).status == "ACCP"
        )
    accepted, refused = (InboundEntry.objects.get(amount=amount) for amount in (1_500, 700))
    never = SimpleNamespace(
        rail="sepa_ct",
        sepa_agent_bic="",
        end_to_end_id="NEVER-SEEN",
        sepa_reference="",
        amount=900,
        settlement_date=today,
    )
    names = [
        simulated_sepa_bank_recall(
            institution=bank.institution, inbound_entry=credit, reason=reason, today=today
        )
        for credit, reason in ((accepted, "DUPL"), (refused, "AC03"), (never, "TECH"))
    ]
    receive(bank, names + names[:1])  # the same recall twice: one
    recalls = {each.original_amount: each for each in InboundRecall.objects.all()}
    assert {amount: each.status for amount, each in recalls.items()} == {
        1_500: "received",
        700: "received",
        900: "refused",
    }
    assert answered(recalls[900]) == ("RJCR", "NOOR")  # a camt.029, as between partner banks
    stranger = Api("v2", issue_key(InstitutionFactory(), scopes=["payments:write", "read"])[1])
    assert answer(stranger, recalls[1_500], accept=True).status_code == 404

    # Accepted: the money to the clearing's settlement account once, in a pacs.004 (FOCR) that
    # names the clearing's pacs.008 the credit came in.
    assert answer(bank.api, recalls[1_500], accept=True).status_code == 201
    assert answer(bank.api, recalls[1_500], accept=True).status_code == 409
    assert posted(bank.account_id) == LOADED + 700
    assert rail(bank, Code.RAIL_SETTLEMENT) == 1_500 - 2_200  # both credits in, one back
    recall = InboundRecall.objects.get(pk=recalls[1_500].pk)
    content = bytes(recall.answer_file.content)
    assert xmlschema.XMLSchema(str(PACS_004.xsd)).is_valid(content)
    returned = read_return(content)
    offered = read_transfers(bytes(accepted.file.content))
    (transaction,) = returned.transactions
    assert (returned.header.instructing_agent_bic, returned.header.instructed_agent_bic) == (
        BIC,
        CLEARING_BIC,
    )
    assert (
        transaction.original_message_id,
        transaction.original_message_type,
        transaction.original_end_to_end_id,
        transaction.original_transaction_id,
        transaction.original_amount,
        transaction.returned_amount,
        transaction.reason.code,
        transaction.original_settlement_date,
        transaction.debtor_iban,
        transaction.creditor_iban,
    ) == (
        offered.header.message_id,
        "pacs.008.001.08",
        accepted.end_to_end_id,
        "TX-ACCEPTED",
        1_500,
        1_500,
        "FOCR",
        offered.header.settlement_date,
        offered.transfers[0].debtor_iban,
        mine,
    )
    accepted.refresh_from_db()
    assert (accepted.status, accepted.return_code, accepted.return_file_id) == (
        "returned",
        "FOCR",
        recall.answer_file_id,
    )

    # Refused: a camt.029 with the reason, nothing moved.
    assert answer(bank.api, recalls[700], accept=False, reasonCode="CUST").status_code == 201
    assert answered(recalls[700]) == ("RJCR", "CUST")
    assert posted(bank.account_id) == LOADED + 700

    # The job delivers the answers into the outbox; the clearing takes them, answering nothing.
    rails_at(timezone.now())
    outbox = connector.folder(bank.institution.pk, "sepa", "outbox")
    assert sum("recall-answer" in path.name for path in outbox.iterdir()) == 3
    assert simulated_clearing_run(institution=bank.institution, today=today) == []
    assert posted(bank.account_id) == LOADED + 700
    assert ledger_breaches() == []
