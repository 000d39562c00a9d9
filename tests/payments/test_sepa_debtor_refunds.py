"""The debtor's refund right of SEPA Core direct debits (issue 50 item 5; docs/payments.md,
"Refunds of inbound direct debits"): the customer of an account another bank's creditor
collected from claims the money back, MD06 within 8 weeks, MD01 until 13 months without a
valid mandate, never a B2B collection; the account credited at once and the collection
returned in TX's pacs.004, XSD-valid, delivered to the sepa outbox and taken by the clearing.
Twice is one refund (raced in tests/payments/test_concurrency.py); another institution's entry
404."""

from datetime import timedelta

import pytest
import xmlschema

from accounts.models import Account, StatementLine
from accounts.verification import ledger_breaches
from cards.dates import today_of
from core.actors import SYSTEM
from events.models import Event
from payments.iso20022 import pacs003, pacs004
from payments.iso20022.messages import PACS_004
from payments.models import DebtorMandate, InboundEntry, RailFile
from payments.services.debtor_register import debtor_mandate_cancel
from payments.services.inbound_files import rail_file_receive
from sandbox.simulated_clearing import simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import (
    ach_profile,
    applied_collection,
    inbound_credit_file,
    rails_at,
    sepa_bank,
)
from tests.payments.test_sepa_interbank import BIC, LOADED, at, interbank_bank

pytestmark = pytest.mark.django_db


def refund(bank, inbound_id: str, body: dict | None = None):
    return bank.api.post(f"/inbound-entries/{inbound_id}/refunds", body or {})


def test_a_refund_within_8_weeks_is_md06_credited_at_once_and_returned_in_a_pacs004(rails_dir):
    bank = interbank_bank()
    day = today_of(bank.institution)
    inbound = applied_collection(
        bank.institution, bank.account_id, settles_on=day - timedelta(weeks=8)
    )
    assert bank.balances()[0] == LOADED - 1_000

    answer = created(refund(bank, inbound.pk, {"reason": "Not what I agreed"}), "v2")
    assert (answer["reasonCode"], answer["returnReason"], answer["reason"]) == (
        "MD06",
        "refund_requested",
        "Not what I agreed",
    )
    assert (answer["amount"], answer["currency"]) == (1_000, "EUR")
    assert bank.balances() == (LOADED, 0, LOADED)
    line = StatementLine.objects.filter(account_id=bank.account_id).latest("pk")
    assert (line.type, line.amount) == (StatementLine.Type.CASH_INC, 1_000)
    shown = bank.api.get(f"/inbound-entries/{inbound.pk}").json()
    assert shown["status"] == "returned"
    assert shown["returnInfo"]["code"] == "MD06"
    assert shown["returnInfo"]["fileId"] == answer["fileId"]
    assert shown["returnInfo"]["traceNumber"] == answer["returnId"]
    event = Event.objects.get(type="inbound_entry.refunded")
    assert (event.actor_type, event.data["refund_id"], event.data["return_code"]) == (
        "apiKey",
        answer["refundId"],
        "MD06",
    )

    # TX's pacs.004: valid against the official XSD, read back to the collection's ids.
    pacs004_file = RailFile.objects.get(pk=answer["fileId"])
    content = bytes(pacs004_file.content)
    assert xmlschema.XMLSchema(str(PACS_004.xsd)).is_valid(content)
    presented = pacs003.read_debits(bytes(inbound.file.content))
    (collection,) = presented.debits
    message = pacs004.read_return(content)
    assert message.header.instructing_agent_bic == BIC
    (returned,) = message.transactions
    assert (
        returned.return_id,
        returned.original_message_id,
        returned.original_message_type,
        returned.original_end_to_end_id,
        returned.original_transaction_id,
        returned.original_amount,
        returned.returned_amount,
        returned.reason.code,
        returned.reason.originator_bic,
        returned.original_settlement_date,
    ) == (
        answer["returnId"],
        presented.header.message_id,
        "pacs.003.001.08",
        collection.end_to_end_id,
        collection.transaction_id,
        1_000,
        1_000,
        "MD06",
        BIC,
        day - timedelta(weeks=8),
    )

    # Twice: 409, nothing moves.
    assert_error(refund(bank, inbound.pk), "v2", 409, "already_exists", ANY)
    assert bank.balances()[0] == LOADED
    # The payments job delivers it into the sepa outbox; the clearing takes it.
    rails_at(at(day, 10))
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert [path.read_bytes() for path in outbox.iterdir()] == [content]
    assert simulated_clearing_run(institution=bank.institution, today=day) == []
    assert ledger_breaches() == []

    # Another institution's entry: 404.
    assert_error(refund(sepa_bank(), inbound.pk), "v2", 404, "not_found", ANY)


def test_after_8_weeks_only_without_a_valid_mandate_and_never_b2b_nor_after_13_months():
    bank = interbank_bank()
    day = today_of(bank.institution)
    late = day - timedelta(weeks=8, days=1)

    def collected(number, reference, **fields):
        fields.setdefault("settles_on", late)
        return applied_collection(
            bank.institution, bank.account_id, number=number, reference=reference, **fields
        )

    valid = collected(1, "VALID")
    cancelled = collected(2, "GONE")
    too_old = collected(3, "OLD", settles_on=day - timedelta(days=400))
    b2b = collected(4, "B2B", settles_on=day, scheme="B2B")
    rejected = collected(5, "NONE", mandate=False)  # no mandate: rejected MD01, nothing moved
    assert (too_old.status, rejected.status) == ("applied", "rejected")
    ach = received_ach_credit(bank)
    before = bank.balances()

    assert_error(refund(bank, valid.pk), "v2", 422, "refund_window_closed", ANY)
    details = refund(bank, valid.pk).json()["details"]
    assert (details["mandateValid"], details["lastDay"]) == (
        True,
        (late + timedelta(weeks=8)).isoformat(),
    )
    assert_error(refund(bank, too_old.pk), "v2", 422, "refund_window_closed", ANY)
    assert_error(refund(bank, b2b.pk), "v2", 422, "refund_not_available", ANY)
    assert_error(refund(bank, ach.pk), "v2", 422, "refund_not_available", ANY)
    assert_error(refund(bank, rejected.pk), "v2", 409, "invalid_state_transition", ANY)
    assert bank.balances() == before
    assert not RailFile.objects.filter(name__contains="pacs004").exists()

    # The customer cancels the mandate: the collection had no valid one, MD01.
    for mandate in DebtorMandate.objects.filter(mandate_reference="GONE"):
        debtor_mandate_cancel(mandate=mandate, actor=SYSTEM)
    answer = created(refund(bank, cancelled.pk), "v2")
    assert (answer["reasonCode"], answer["returnReason"]) == ("MD01", "unauthorized")
    assert bank.balances()[0] == before[0] + 1_000
    assert InboundEntry.objects.get(pk=cancelled.pk).return_code == "MD01"

    # A frozen account is credited (a freeze keeps money in); a closed one receives nothing.
    frozen, closed = collected(6, "FROZEN", settles_on=day), collected(7, "CLOSED", settles_on=day)
    Account.objects.filter(pk=bank.account_id).update(status="frozen")
    assert created(refund(bank, frozen.pk), "v2")["reasonCode"] == "MD06"
    Account.objects.filter(pk=bank.account_id).update(status="closed")
    assert_error(refund(bank, closed.pk), "v2", 422, "account_not_active", ANY)
    assert InboundEntry.objects.get(pk=closed.pk).status == "applied"
    assert ledger_breaches() == []


def received_ach_credit(bank) -> InboundEntry:
    """Another bank's ACH credit, received: an inbound entry that is no direct debit."""
    content = inbound_credit_file(
        ach_profile(bank.institution), "123456789", 100, today_of(bank.institution)
    )
    rail_file = rail_file_receive(
        institution=bank.institution, rail="ach", name="in.ach", content=content
    )
    return InboundEntry.objects.get(file=rail_file)
