"""SEPA Instant of an `initiation` profile (issue 50 item 4; docs/payments.md, "SEPA Instant"),
over HTTP: an approved `sepa_inst` order is sent once its creation commits, as a one-transaction
pain.001 (INST) handed to the simulated clearing, which answers at once by the creditor IBAN's
scenario: settled (ACSC), rejected with its reason (RJCT), or nothing within the timeout
(rejected TECH, the hold released); a late answer changes nothing and is recorded; two senders
at once send once; another institution's ids are not found. An `interbank` profile's (a bank
in the clearing) goes as a pacs.008 and is answered by a pacs.002, by the same code otherwise
(the last tests). The timeout is 0.2 s here."""

import base64
import time
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
import xmlschema
from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.models import Account
from accounts.services import account_set_status
from accounts.verification import ledger_breaches
from cards.dates import today_of
from core.actors import Actor
from events.models import Event
from payments import connector
from payments.account_ibans import account_iban
from payments.iso20022 import pacs002, pacs008
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import PACS_008, PAIN_001, PAIN_002
from payments.iso20022.pain001 import read_initiation
from payments.models import PaymentOrder, Rail, RailFile, RailJournal, RailNotice
from payments.services.inbound_files import rail_file_receive
from payments.services.instant import _sent, instant_send, instant_sweep
from payments.services.orders import payment_order_approve
from sandbox.simulated_bank import german_iban
from sandbox.simulated_clearing import SimulatedClearing, simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.accounts.ledger.helpers import run_threads
from tests.payments.helpers import rails_at, sepa_bank, sepa_external_body
from tests.payments.test_sepa_interbank import (
    BIC,
    REJECTED_AC04,
    SETTLES,
    interbank_bank,
    recall,
)

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 2_500
LOADED = 100_000
TIMEOUT = 0.2
SILENT = german_iban("0000000901")
LATE = german_iban("0000000902")


@pytest.fixture(autouse=True)
def instant_timeout(settings):
    settings.SEPA_INSTANT_TIMEOUT_SECONDS = TIMEOUT


def instant(bank, iban: str | None = None, **fields) -> dict:
    external = bank.external(iban) if iban else bank.external()
    return bank.ordered(external["externalAccountId"], AMOUNT, rail="sepa_inst", **fields)


def files_of(bank, rail: str = Rail.SEPA_INST) -> dict[str, bytes]:
    return {
        rail_file.direction: bytes(rail_file.content)
        for rail_file in RailFile.objects.filter(institution=bank.institution, rail=rail)
    }


def events_of(order_id: str) -> list[str]:
    return list(
        Event.objects.filter(data__payment_order_id=order_id)
        .order_by("pk")
        .values_list("type", flat=True)
    )


def test_an_instant_payment_is_sent_at_once_and_settled_by_the_clearing():
    bank = sepa_bank(load_amount=LOADED)
    made = instant(bank, remittanceInfo="Invoice 7")
    # The POST answers once the clearing has: settled, through a pain.001 and a pain.002.
    assert made["status"] == "settled"
    assert made["returnInfo"] is None
    assert made["traceNumber"] == made["paymentOrderId"][-15:]
    files = files_of(bank)
    assert set(files) == {"outbound", "inbound"}
    assert xmlschema.XMLSchema(str(PAIN_001.xsd)).is_valid(files["outbound"])
    assert xmlschema.XMLSchema(str(PAIN_002.xsd)).is_valid(files["inbound"])
    assert b"<Cd>INST</Cd>" in files["outbound"]  # PmtTpInf/LclInstrm/Cd
    initiation = read_initiation(files["outbound"])
    (payment,) = initiation.payments
    assert payment.instant
    (transfer,) = payment.transfers
    assert (transfer.end_to_end_id, transfer.amount) == (made["endToEndId"], AMOUNT)
    assert transfer.remittance.text == "Invoice 7"
    assert b"ACSC" in files["inbound"]
    outbound = RailFile.objects.get(institution=bank.institution, direction="outbound")
    assert made["fileId"] == outbound.pk
    # Money: the hold captured, through clearing to settlement in one go.
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []
    assert events_of(made["paymentOrderId"]) == [
        "payment_order.created",
        "payment_order.sent",
        "payment_order.settled",
    ]
    # Nothing waits for the payments job, which finds nothing to do.
    assert instant_sweep(now=timezone.now() + timedelta(minutes=5)) == (0, 0)
    assert bank.api.get(f"/payment-orders/{made['paymentOrderId']}").json()["status"] == "settled"


@pytest.mark.parametrize(
    ("account", "code", "reason"),
    [
        ("0000000101", "AC01", "no_account"),
        ("0000000104", "AC04", "account_closed"),
        ("0000000106", "AC06", "account_frozen"),
        ("0000000111", "AG01", "transaction_forbidden"),
        ("0000000114", "AM04", "insufficient_funds"),
    ],
)
def test_a_rejection_of_the_clearing_releases_the_hold_and_keeps_its_reason(account, code, reason):
    bank = sepa_bank(load_amount=LOADED)
    made = instant(bank, german_iban(account))
    assert made["status"] == "rejected"
    assert made["returnInfo"] == {"code": code, "reason": reason, "late": False}
    assert bank.balances() == (LOADED, 0, LOADED)
    notice = RailNotice.objects.get(order_id=made["paymentOrderId"])
    assert (notice.kind, notice.code, notice.reason) == ("reject", code, reason)
    assert ledger_breaches() == []


def test_no_answer_within_the_timeout_is_rejected_tech_and_the_hold_released():
    bank = sepa_bank(load_amount=LOADED)
    external = bank.external(SILENT)
    started = time.monotonic()
    response = bank.order(external["externalAccountId"], AMOUNT, rail="sepa_inst")
    elapsed = time.monotonic() - started
    assert response.status_code == 201
    made = response.json()
    assert made["status"] == "rejected"
    assert made["returnInfo"] == {"code": "TECH", "reason": "technical_problem", "late": False}
    assert TIMEOUT <= elapsed < TIMEOUT + 5  # bounded by the timeout
    assert set(files_of(bank)) == {"outbound"}  # the pain.001, and no answer
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []
    # The IBAN is in no notice, event or error.
    assert SILENT not in str(list(Event.objects.values_list("data", flat=True)))


def test_a_late_answer_changes_nothing_and_is_recorded_for_reconciliation():
    bank = sepa_bank(load_amount=LOADED)
    made = instant(bank, LATE)
    assert made["status"] == "rejected"
    assert made["returnInfo"]["code"] == "TECH"
    # The clearing's settled answer came after the timeout: the payments job reads it.
    (read,) = connector.collect(bank.institution, "sepa")
    assert read.status == RailFile.Status.APPLIED
    order = bank.api.get(f"/payment-orders/{made['paymentOrderId']}").json()
    assert (order["status"], order["returnInfo"]["code"]) == ("rejected", "TECH")
    notices = RailNotice.objects.filter(order_id=made["paymentOrderId"]).order_by("pk")
    assert [(each.kind, each.code, each.reason, each.late) for each in notices] == [
        ("reject", "TECH", "technical_problem", False),
        ("status", "ACSC", "late_settled", True),
    ]
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []
    # The same answer again is the same file: nothing more.
    inbox = connector.folder(bank.institution.pk, "sepa", "inbox")
    (inbox / "again.xml").write_bytes(bytes(read.content))
    assert [each.pk for each in connector.collect(bank.institution, "sepa")] == [read.pk]
    assert RailNotice.objects.filter(order_id=made["paymentOrderId"]).count() == 2


def test_two_senders_at_once_send_an_order_once():
    bank = sepa_bank(load_amount=LOADED, approval_above=AMOUNT - 1)
    made = instant(bank)
    assert made["status"] == "needs_approval"
    # Approved (as staff would) without the approval's own sending: two workers race for it.
    PaymentOrder.objects.filter(pk=made["paymentOrderId"]).update(status="approved")
    results = run_threads(2, lambda index: instant_send(made["paymentOrderId"]).status)
    # The loser sends nothing and finds the order as the winner has it (sent, or settled).
    assert "settled" in results
    assert set(results) <= {"sent", "settled"}
    assert PaymentOrder.objects.get(pk=made["paymentOrderId"]).status == "settled"
    assert RailFile.objects.filter(institution=bank.institution, direction="outbound").count() == 1
    assert events_of(made["paymentOrderId"]).count("payment_order.sent") == 1
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []


def test_the_payments_job_sends_an_order_whose_sending_was_lost():
    bank = sepa_bank(load_amount=LOADED, approval_above=AMOUNT - 1)
    made = instant(bank)
    PaymentOrder.objects.filter(pk=made["paymentOrderId"]).update(status="approved")
    # Not before the timeout has passed (its own sending may be under way)...
    assert instant_sweep() == (0, 0)
    # ...then once.
    later = timezone.now() + timedelta(seconds=1)
    assert instant_sweep(now=later) == (1, 0)
    assert instant_sweep(now=later) == (0, 0)
    assert PaymentOrder.objects.get(pk=made["paymentOrderId"]).status == "settled"


def test_another_institutions_instant_order_and_files_are_not_found():
    bank = sepa_bank(load_amount=LOADED)
    made = instant(bank)
    other = sepa_bank(load_amount=LOADED)
    assert other.api.get(f"/payment-orders/{made['paymentOrderId']}").status_code == 404
    assert other.api.get(f"/rail-files/{made['fileId']}").status_code == 404
    assert other.api.get(f"/rail-files/{made['fileId']}/content").status_code == 404
    assert other.api.post(f"/payment-orders/{made['paymentOrderId']}/cancel").status_code == 404
    assert other.api.get("/rail-files").json()["data"] == []
    content = bank.api.get(f"/rail-files/{made['fileId']}/content").json()["contentBase64"]
    assert base64.b64decode(content) == files_of(bank)["outbound"]


def test_an_order_a_staff_user_approves_is_sent_once_the_approval_commits():
    bank = sepa_bank(load_amount=LOADED, approval_above=AMOUNT - 1)
    made = instant(bank)
    assert made["status"] == "needs_approval"
    assert bank.balances() == (LOADED, AMOUNT, LOADED - AMOUNT)  # held meanwhile
    staff = get_user_model().objects.create_user("ops", password="x" * 20)  # noqa: S106
    row = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    payment_order_approve(order=row, actor=Actor(user=staff))
    assert PaymentOrder.objects.get(pk=made["paymentOrderId"]).status == "settled"
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []


def test_the_same_idempotency_key_again_answers_the_same_and_sends_nothing_more():
    bank = sepa_bank(load_amount=LOADED)
    external = bank.external()["externalAccountId"]
    body = {
        "accountId": bank.account_id,
        "externalAccountId": external,
        "direction": "credit",
        "amount": AMOUNT,
        "currency": "EUR",
        "rail": "sepa_inst",
    }
    key = str(uuid.uuid4())
    first = bank.api.post("/payment-orders", body, idempotency_key=key)
    again = bank.api.post("/payment-orders", body, idempotency_key=key)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert first.json()["status"] == "settled"
    assert PaymentOrder.objects.filter(institution=bank.institution).count() == 1
    assert RailFile.objects.filter(institution=bank.institution, direction="outbound").count() == 1
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)


def test_an_order_a_crash_left_in_flight_is_rejected_tech_by_the_payments_job():
    bank = sepa_bank(load_amount=LOADED, approval_above=AMOUNT - 1)
    made = instant(bank)
    PaymentOrder.objects.filter(pk=made["paymentOrderId"]).update(status="approved")
    # Sent, and the process stopped before the clearing answered.
    assert _sent(made["paymentOrderId"], timezone.now()) is not None
    assert PaymentOrder.objects.get(pk=made["paymentOrderId"]).status == "sent"
    assert bank.balances() == (LOADED, AMOUNT, LOADED - AMOUNT)  # held while in flight
    assert ledger_breaches() == []
    # Not while its answer may still come; past twice the timeout, rejected TECH.
    assert instant_sweep() == (0, 0)
    assert instant_sweep(now=timezone.now() + timedelta(seconds=1)) == (0, 1)
    order = bank.api.get(f"/payment-orders/{made['paymentOrderId']}").json()
    assert (order["status"], order["returnInfo"]["code"]) == ("rejected", "TECH")
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []


def test_without_a_clearing_an_instant_order_is_refused_and_nothing_is_held(settings):
    settings.SEPA_INSTANT_CLEARING = ""  # production's default: it names its own
    bank = sepa_bank(load_amount=LOADED)
    external = bank.external()["externalAccountId"]
    response = bank.order(external, AMOUNT, rail="sepa_inst")
    assert response.status_code == 422
    assert response.json()["code"] == "rail_not_available"
    assert PaymentOrder.objects.filter(institution=bank.institution).count() == 0
    assert bank.balances() == (LOADED, 0, LOADED)


def test_a_settlement_of_an_order_whose_account_was_frozen_in_flight_is_booked_all_the_same():
    bank = sepa_bank(load_amount=LOADED, approval_above=AMOUNT - 1)
    made = instant(bank)
    PaymentOrder.objects.filter(pk=made["paymentOrderId"]).update(status="approved")
    order, rail_file, content, _ = _sent(made["paymentOrderId"], timezone.now())
    account = Account.objects.get(pk=bank.account_id)
    account_set_status(account=account, status=Account.Status.FROZEN)
    answer = SimulatedClearing().exchange(
        institution=bank.institution, content=content, timeout=TIMEOUT
    )
    received = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_INST, name="answer.xml", content=answer
    )
    assert received.status == RailFile.Status.APPLIED
    assert PaymentOrder.objects.get(pk=order.pk).status == "settled"
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []


# --- An interbank profile: a pacs.008 to the clearing, its pacs.002 the answer ---------------


def internal(bank, code: str) -> int:
    account = Account.objects.filter(
        institution=bank.institution, internal_code=code, currency="EUR"
    ).first()
    return account.posted if account else 0


def test_an_interbank_instant_payment_is_a_pacs008_and_the_clearings_pacs002_settles_it_once():
    bank = interbank_bank()
    made = instant(bank, SETTLES, remittanceInfo="Invoice 7")
    assert made["status"] == "settled"
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    files = files_of(bank)
    # The pacs.008 as written: valid against the official XSD (an independent validator), and
    # reading back to the order, between banks, SEPA Instant through RT1.
    assert xmlschema.XMLSchema(str(PACS_008.xsd)).is_valid(files["outbound"])
    message = pacs008.read_transfers(files["outbound"])
    header = message.header
    assert (
        header.message_id,
        header.settlement_date,
        header.settlement_method,
        header.clearing_system,
        header.instructing_agent_bic,
    ) == (order.file_id.replace("_", "-"), today_of(bank.institution), "CLRG", "RT1", BIC)
    (transfer,) = message.transfers
    assert order.trace_number == order.pk[-15:]
    assert (transfer.instant, transfer.end_to_end_id, transfer.transaction_id) == (
        True,
        order.end_to_end_id,
        order.trace_number,
    )
    assert (transfer.amount, transfer.remittance.text) == (AMOUNT, "Invoice 7")
    assert (transfer.debtor_iban, transfer.debtor_bic, transfer.debtor_name) == (
        account_iban(order.account, bank.profile),
        BIC,
        "Ada Lovelace",
    )
    assert (transfer.creditor_iban, transfer.creditor_bic) == (SETTLES, "DEUTDEFF")
    assert abs(transfer.accepted_at - order.sent_at) < timedelta(seconds=5)  # AccptncDtTm
    # Money: the hold captured into clearing and on to settlement, two journals of the order.
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert (internal(bank, "rail_clearing"), internal(bank, "rail_settlement")) == (0, AMOUNT)
    assert RailJournal.objects.filter(order=order).count() == 2
    assert events_of(order.pk) == [
        "payment_order.created",
        "payment_order.sent",
        "payment_order.settled",
    ]
    # The same answer again (another message of it): settles nothing twice, recorded late.
    report = pacs002.read_status_report(files["inbound"])
    again = pacs002.write_status_report(replace(report, message_id="SIMCLR-AGAIN"))
    received = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_INST, name="again.xml", content=again
    )
    assert received.status == RailFile.Status.APPLIED
    assert PaymentOrder.objects.get(pk=order.pk).status == "settled"
    assert RailJournal.objects.filter(order=order).count() == 2
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    notices = RailNotice.objects.filter(order=order)
    assert [(n.kind, n.code, n.reason, n.late) for n in notices] == [
        ("status", "ACSC", "late_settled", True)
    ]
    assert ledger_breaches() == []
    # Its recall goes to the clearing, whose pacs.004 (FOCR) finds the instant order by its
    # transaction id: the money back to the customer.
    assert recall(bank, made).status_code == 201
    rails_at(timezone.now())
    assert simulated_clearing_run(institution=bank.institution)
    rails_at(timezone.now())
    returned = bank.api.get(f"/payment-orders/{order.pk}").json()
    assert (returned["status"], returned["returnInfo"]["code"]) == ("returned", "FOCR")
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []
    # The simulated clearing reads what it is given as TX does: a broken pacs.008, or one that
    # is not SEPA Instant, is refused.
    clearing = SimulatedClearing()
    broken = files["outbound"].replace(b"<SttlmMtd>CLRG<", b"<SttlmMtd>CASH<")
    with pytest.raises(Iso20022Error):
        clearing.exchange(institution=bank.institution, content=broken, timeout=TIMEOUT)
    plain = replace(transfer, instant=False, accepted_at=None)
    content = pacs008.write_transfers(replace(message, transfers=(plain,)))
    with pytest.raises(ValueError, match="not SEPA Instant"):
        clearing.exchange(institution=bank.institution, content=content, timeout=TIMEOUT)


def test_an_interbank_instant_payment_the_clearing_rejects_keeps_its_reason():
    bank = interbank_bank()
    made = instant(bank, REJECTED_AC04)
    assert made["status"] == "rejected"
    assert made["returnInfo"] == {"code": "AC04", "reason": "account_closed", "late": False}
    assert b"<TxSts>RJCT</TxSts>" in files_of(bank)["inbound"]
    notice = RailNotice.objects.get(order_id=made["paymentOrderId"])
    assert (notice.kind, notice.code, notice.reason) == ("reject", "AC04", "account_closed")
    assert bank.balances() == (LOADED, 0, LOADED)
    assert internal(bank, "rail_clearing") == internal(bank, "rail_settlement") == 0
    # Between banks the creditor's bank is named: an instant order without its BIC is refused.
    body = sepa_external_body(bank.customer_id, SETTLES)
    del body["sepa"]["bic"]
    external = created(bank.api.post("/external-accounts", body), "v2")["externalAccountId"]
    response = bank.order(external, AMOUNT, rail="sepa_inst")
    assert (
        "BIC"
        in assert_error(response, "v2", 400, "validation_error", ANY)["details"][
            "externalAccountId"
        ]
    )
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []


def test_an_interbank_instant_payment_unanswered_in_time_is_rejected_tech_its_late_answer_kept():
    bank = interbank_bank()
    made = instant(bank, LATE)
    assert made["status"] == "rejected"
    assert made["returnInfo"] == {"code": "TECH", "reason": "technical_problem", "late": False}
    assert set(files_of(bank)) == {"outbound"}
    assert bank.balances() == (LOADED, 0, LOADED)
    # The clearing's pacs.002 came after the timeout, into the inbox the payments job reads.
    (read,) = connector.collect(bank.institution, "sepa")
    assert read.status == RailFile.Status.APPLIED  # a pacs.002, valid (TX read it)
    assert b"pacs.002" in bytes(read.content)[:400]
    notices = RailNotice.objects.filter(order_id=made["paymentOrderId"]).order_by("pk")
    assert [(each.kind, each.code, each.reason, each.late) for each in notices] == [
        ("reject", "TECH", "technical_problem", False),
        ("status", "ACSC", "late_settled", True),
    ]
    order = bank.api.get(f"/payment-orders/{made['paymentOrderId']}").json()
    assert (order["status"], order["returnInfo"]["code"]) == ("rejected", "TECH")
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []
