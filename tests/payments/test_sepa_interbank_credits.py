"""SEPA Credit Transfers to a bank in the clearing (issue 50 item 3; docs/payments.md, "Inbound
SEPA"): the clearing's pacs.008 file of other banks' customers' transfers to the accounts'
IBANs, each applied once, or returned to the clearing with TX's pacs.004 (AC01, AC06); a file
for an institution not in the clearing, a broken one and one with an instant transfer refused
whole."""

import base64

import pytest
import xmlschema
from django.core.management import call_command

from accounts.models import Account
from accounts.verification import ledger_breaches
from cards.dates import today_of
from events.models import Event
from payments.account_ibans import _iban, account_iban
from payments.iso20022 import pacs004, pacs008
from payments.iso20022.messages import PACS_004
from payments.models import InboundEntry, InboundRecall, RailFile
from sandbox.simulated_bank import simulated_sepa_bank_recall
from sandbox.simulated_clearing import send_credit, simulated_clearing_run
from tests.payments.helpers import eur_account, offered_pacs008, rails_at, sepa_bank
from tests.payments.test_sepa_interbank import BIC, LOADED, at, interbank_bank

pytestmark = pytest.mark.django_db


def upload(bank, content: bytes):
    body = {
        "rail": "sepa_ct",
        "name": "ct.xml",
        "contentBase64": base64.b64encode(content).decode(),
    }
    return bank.api.post("/rail-files", body)


def inbox_file(rails_dir, bank, name: str) -> bytes:
    return (rails_dir / bank.institution.pk / "sepa" / "inbox" / name).read_bytes()


def test_transfers_are_applied_once_or_returned_with_txs_pacs004(rails_dir):
    bank = interbank_bank()
    iban = account_iban(Account.objects.get(pk=bank.account_id), bank.profile)
    frozen = eur_account(bank.api, bank.customer_id, 0)
    Account.objects.filter(pk=frozen).update(status="frozen")
    frozen_iban = account_iban(Account.objects.get(pk=frozen), bank.profile)
    unknown = _iban("LU", "001", "999999999999")
    day = today_of(bank.institution)
    for credited, amount in ((iban, 1_500), (unknown, 200), (frozen_iban, 300)):
        send_credit(iban=credited, amount=amount, today=day)
    rails_at(at(day, 10))  # the payments job reads the inbox
    entries = list(
        InboundEntry.objects.filter(institution=bank.institution, rail="sepa_ct").order_by(
            "sepa_reference"
        )
    )
    assert [(e.status, e.return_code, e.return_reason, e.amount) for e in entries] == [
        ("applied", "", "", 1_500),
        ("returned", "AC01", "no_account", 200),
        ("returned", "AC06", "account_frozen", 300),
    ]
    applied = entries[0]
    assert (applied.settlement_date, applied.sepa_agent_bic) == (day, "DEUTDEFFXXX")
    assert applied.end_to_end_id == f"E2E-{applied.sepa_reference}"
    assert applied.remittance_info == "Invoice 1" and applied.company_name == "ACME GMBH"
    assert applied.account_number_last4 == iban[-4:]
    assert bank.balances() == (LOADED + 1_500, 0, LOADED + 1_500)
    shown = bank.api.get(f"/inbound-entries/{entries[1].pk}").json()
    assert (shown["rail"], shown["status"], shown["direction"]) == ("sepa_ct", "returned", "credit")
    assert unknown not in str(shown)
    assert shown["returnInfo"] == {
        "code": "AC01",
        "reason": "no_account",
        "fileId": entries[1].return_file_id,
        "traceNumber": entries[1].pk[-15:],
        "stopPaymentId": None,
    }
    returned = Event.objects.filter(type="inbound_entry.returned").order_by("pk")
    assert [e.data["return_code"] for e in returned] == ["AC01", "AC06"]
    assert all(frozen_iban not in str(e.data) and unknown not in str(e.data) for e in returned)

    # TX's pacs.004 of each file's returns: valid against the official XSD, naming the
    # clearing's original transaction, delivered into the sepa outbox, which the clearing takes.
    schema = xmlschema.XMLSchema(str(PACS_004.xsd))
    for entry in entries[1:]:
        answer = entry.return_file
        assert (answer.direction, answer.rail, answer.entry_count) == ("outbound", "sepa_ct", 1)
        content = bytes(answer.content)
        assert schema.is_valid(content)
        message = pacs004.read_return(content)
        original = pacs008.read_transfers(bytes(entry.file.content))
        (transfer,) = original.transfers
        (back,) = message.transactions
        assert message.header.instructing_agent_bic == BIC
        assert message.header.instructed_agent_bic == original.header.instructing_agent_bic
        assert (back.original_message_id, back.original_transaction_id) == (
            original.header.message_id,
            entry.sepa_reference,
        )
        assert (back.original_end_to_end_id, back.original_settlement_date) == (
            transfer.end_to_end_id,
            day,
        )
        assert (back.returned_amount, back.reason.code, back.reason.originator_bic) == (
            entry.amount,
            entry.return_code,
            BIC,
        )
        assert back.return_id == entry.return_trace_number == entry.pk[-15:]
    rails_at(at(day, 10, 5))
    assert len(list((rails_dir / bank.institution.pk / "sepa" / "outbox").iterdir())) == 2
    assert simulated_clearing_run(institution=bank.institution, today=day) == []

    # The same file again: the same file; the same transfer in another message (the same
    # debtor bank and transaction id): another file, nothing moves, nothing returned twice.
    assert upload(bank, bytes(applied.file.content)).json()["fileId"] == applied.file_id
    for entry in entries[:2]:
        content = bytes(entry.file.content)
        message_id = pacs008.read_transfers(content).header.message_id.encode()
        resent = upload(bank, content.replace(message_id, b"SIMCLR-MSG-AGAIN"))
        assert resent.status_code == 201, resent.json()
    assert InboundEntry.objects.filter(rail="sepa_ct").count() == 3
    assert RailFile.objects.filter(direction="outbound", rail="sepa_ct").count() == 2
    assert bank.balances()[0] == LOADED + 1_500

    # The sandbox's command sends one the same way.
    call_command("simulated_bank", "--send-clearing-credit", iban, "100")
    rails_at(at(day, 11))
    assert bank.balances()[0] == LOADED + 1_600

    # A recall of a transfer: its accepted return names the clearing's pacs.008 it came in.
    simulated_sepa_bank_recall(
        institution=bank.institution, inbound_entry=applied, reason="DUPL", today=day
    )
    rails_at(at(day, 12))
    recall = InboundRecall.objects.get(inbound_entry=applied)
    answered = bank.api.post(f"/inbound-recalls/{recall.pk}/answers", {"accept": True})
    assert answered.status_code == 201, answered.json()
    recall.refresh_from_db()
    (back,) = pacs004.read_return(bytes(recall.answer_file.content)).transactions
    offered = pacs008.read_transfers(bytes(applied.file.content))
    assert (back.original_message_id, back.reason.code, back.debtor_name) == (
        offered.header.message_id,
        "FOCR",
        "ACME GMBH",
    )
    assert bank.balances()[0] == LOADED + 100
    assert ledger_breaches() == []


def test_a_file_for_an_institution_not_in_the_clearing_a_broken_one_refused_whole(rails_dir):
    bank = interbank_bank()
    iban = account_iban(Account.objects.get(pk=bank.account_id), bank.profile)
    _, name = send_credit(iban=iban, amount=100)
    content = inbox_file(rails_dir, bank, name)
    # An institution whose SEPA profile is not interbank: it is not in the clearing.
    response = upload(sepa_bank(), content)
    assert response.status_code == 400
    assert "not interbank" in response.json()["details"]["contentBase64"]
    # Not valid against the XSD: refused with the validator's message, naming no IBAN.
    broken = content.replace(b"<IntrBkSttlmAmt", b"<IntrBkSttlmAmount", 1)
    response = upload(bank, broken.replace(b"</IntrBkSttlmAmt>", b"</IntrBkSttlmAmount>", 1))
    assert response.status_code == 400
    refusal = response.json()["details"]["contentBase64"]
    assert "IntrBkSttlmAmount" in refusal and iban not in refusal
    # A SEPA Instant transfer comes in real time, not in a file.
    response = upload(bank, offered_pacs008(iban, "TX-1", instant=True))
    assert response.status_code == 400
    assert "Instant" in response.json()["details"]["contentBase64"]
    assert not InboundEntry.objects.exists()
    assert bank.balances()[0] == LOADED
