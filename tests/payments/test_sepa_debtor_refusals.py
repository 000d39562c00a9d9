"""The debtor's refusal of a SEPA direct debit before settlement (issue 50 item 5;
docs/payments.md, "Refusals of inbound direct debits"): the customer of an account another
bank's creditor presented a collection from refuses it before its settlement date; the entry is
rejected MS02, TX's pacs.002 (XSD-valid) goes to the sepa outbox, and on the date the job moves
nothing and returns nothing. On or after the date, or a second time: 409 (two at once raced in
tests/payments/test_concurrency.py); another institution's entry 404."""

from datetime import timedelta

import pytest
import xmlschema

from accounts.verification import ledger_breaches
from cards.dates import today_of
from events.models import Event
from payments.iso20022 import pacs002
from payments.iso20022.messages import PACS_002
from payments.models import DebtorRefusal, InboundEntry, RailFile
from sandbox.simulated_clearing import simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import applied_collection, rails_at, sepa_bank
from tests.payments.test_sepa_interbank import BIC, LOADED, at, interbank_bank, next_sepa_day

pytestmark = pytest.mark.django_db


def refuse(bank, inbound_id: str, body: dict | None = None):
    return bank.api.post(f"/inbound-entries/{inbound_id}/refusals", body or {})


def test_a_refused_collection_is_rejected_ms02_in_a_pacs002_and_never_debited(rails_dir):
    bank = interbank_bank()
    due = next_sepa_day(bank, today_of(bank.institution))
    inbound = applied_collection(bank.institution, bank.account_id, settles_on=due, settle=False)
    assert inbound.status == "received"
    assert_error(
        refuse(bank, inbound.pk, {"reason": "x" * 141}), "v2", 400, "validation_error", ANY
    )

    answer = created(refuse(bank, inbound.pk, {"reason": "I never bought this"}), "v2")
    assert (answer["reasonCode"], answer["rejectReason"], answer["reason"]) == (
        "MS02",
        "refused_by_customer",
        "I never bought this",
    )
    assert (answer["amount"], answer["settlementDate"]) == (1_000, due.isoformat())
    shown = bank.api.get(f"/inbound-entries/{inbound.pk}").json()
    assert (shown["status"], shown["returnInfo"]["code"]) == ("rejected", "MS02")
    event = Event.objects.get(object_id=inbound.pk, type="inbound_entry.rejected")
    assert (event.actor_type, event.data["return_code"], event.data["refusal_id"]) == (
        "apiKey",
        "MS02",
        answer["refusalId"],
    )
    # TX's pacs.002: valid against the official XSD, naming the collection and MS02.
    content = bytes(RailFile.objects.get(pk=answer["fileId"]).content)
    assert xmlschema.XMLSchema(str(PACS_002.xsd)).is_valid(content)
    report = pacs002.read_status_report(content)
    (status,) = report.transactions
    assert (status.status, status.reasons[0].code, status.reasons[0].originator_bic) == (
        "RJCT",
        "MS02",
        BIC,
    )
    assert status.original_transaction_id == inbound.sepa_reference
    # Twice: 409; another institution's entry: 404.
    assert_error(refuse(bank, inbound.pk), "v2", 409, "invalid_state_transition", ANY)
    assert_error(refuse(sepa_bank(), inbound.pk), "v2", 404, "not_found", ANY)

    # On its date the job debits nothing and returns nothing; the pacs.002 goes to the outbox.
    rails_at(at(due, 10))
    assert InboundEntry.objects.get(pk=inbound.pk).status == "rejected"
    assert bank.balances() == (LOADED, 0, LOADED)
    assert not RailFile.objects.filter(name__contains="pacs004").exists()
    assert DebtorRefusal.objects.count() == 1
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert len(list(outbox.iterdir())) == 1
    assert simulated_clearing_run(institution=bank.institution, today=due) == []
    assert ledger_breaches() == []


def test_a_collection_is_refused_only_before_its_settlement_date():
    """On its date (not yet settled by the job) and after it (debited): 409, nothing written."""
    bank = interbank_bank()
    today = today_of(bank.institution)
    due_today = applied_collection(
        bank.institution, bank.account_id, settles_on=today, settle=False
    )
    debited = applied_collection(
        bank.institution,
        bank.account_id,
        reference="REFUND-2",
        number=2,
        settles_on=today - timedelta(days=1),
    )
    assert (due_today.status, debited.status) == ("received", "applied")
    for inbound in (due_today, debited):
        assert_error(refuse(bank, inbound.pk), "v2", 409, "invalid_state_transition", ANY)
    assert not DebtorRefusal.objects.exists()
    assert not RailFile.objects.filter(direction="outbound").exists()
    assert InboundEntry.objects.get(pk=due_today.pk).status == "received"
