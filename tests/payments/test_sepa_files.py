"""SEPA credit transfers of an `initiation` profile through real files (issue 50): the cut-off
writes one pain.001 per window into the `sepa` outbox, the simulated partner bank answers with
pain.002 and camt.054 from its scenario table (keyed by IBAN), and TX reads them from the inbox
or `POST /rail-files`: settled, rejected, returned, the same file twice once, hostile XML
refused whole, another institution's files not found."""

import base64
from dataclasses import replace
from datetime import date, timedelta

import pytest
import xmlschema

from accounts.verification import ledger_breaches
from cards.dates import today_of
from payments.calendar import is_sepa_day
from payments.connector import folder
from payments.iso20022.camt054 import read_notification, write_notification
from payments.iso20022.messages import PAIN_001
from payments.iso20022.pain001 import read_initiation
from payments.models import PaymentOrder, Rail, RailFile, RailJournal, RailNotice
from payments.services.cutoff import cutoff_run
from sandbox.simulated_bank import german_iban, simulated_sepa_bank_run
from tests.payments.helpers import BERLIN, local, rails_at, sepa_bank

pytestmark = pytest.mark.django_db

AMOUNT = 2_500
LOADED = 100_000
REJECTED_AC04 = german_iban("0000000104")
RETURNED_AC04 = german_iban("0000000204")


def next_sepa_day(bank, after: date) -> date:
    """The institution's first SEPA day more than a day after `after`."""
    day = after + timedelta(days=2)
    while not is_sepa_day(bank.institution, day):
        day += timedelta(days=1)
    return day


def at(day: date, hour: int, minute: int = 0):
    return local(day, hour, minute, zone=BERLIN)


def sent_order(iban: str | None = None, **order):
    """A SEPA bank, an order of AMOUNT to `iban` (the ISO example's when None), and the SEPA day
    its cut-off (15:00, Berlin) has passed on, with the payments job run after it."""
    bank = sepa_bank(load_amount=LOADED)
    external = bank.external(iban) if iban else bank.external()
    made = bank.ordered(external["externalAccountId"], AMOUNT, **order)
    assert made["status"] == "approved"
    day = next_sepa_day(bank, today_of(bank.institution))
    rails_at(at(day, 15, 1))
    return bank, made, day


def order_of(bank, made) -> dict:
    response = bank.api.get(f"/payment-orders/{made['paymentOrderId']}")
    assert response.status_code == 200
    return response.json()


def upload(bank, content: bytes, name: str = "answer.xml"):
    body = {"rail": "sepa_ct", "name": name, "contentBase64": base64.b64encode(content).decode()}
    return bank.api.post("/rail-files", body)


def bank_files(bank, day: date) -> dict[str, bytes]:
    """The simulated bank's answers due by `day`, taken out of the inbox (to upload them)."""
    names = simulated_sepa_bank_run(institution=bank.institution, today=day)
    inbox = folder(bank.institution.pk, "sepa", "inbox")
    files = {}
    for name in names:
        files[name] = (inbox / name).read_bytes()
        (inbox / name).unlink()
    return files


def test_a_credit_transfer_travels_through_a_pain001_and_is_booked_by_a_camt054(rails_dir):
    bank, made, day = sent_order(remittanceInfo="Invoice 42")
    order = order_of(bank, made)
    assert order["status"] == "sent"
    assert order["traceNumber"] == made["paymentOrderId"][-15:]
    # One pain.001 for the window, fetchable through the API, valid against its official XSD
    # (an independent validator) and re-parsing to the order.
    listed = bank.api.get("/rail-files").json()["data"]
    assert [(each["rail"], each["direction"], each["status"]) for each in listed] == [
        ("sepa_ct", "outbound", "delivered")
    ]
    file_id = order["fileId"]
    content = base64.b64decode(
        bank.api.get(f"/rail-files/{file_id}/content").json()["contentBase64"]
    )
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert [path.read_bytes() for path in outbox.iterdir()] == [content]
    assert xmlschema.XMLSchema(str(PAIN_001.xsd)).is_valid(content)
    initiation = read_initiation(content)
    assert initiation.message_id == file_id.replace("_", "-")
    (payment,) = initiation.payments
    assert payment.requested_execution_date == day
    assert payment.debtor_iban == bank.profile.settlement_iban
    (transfer,) = payment.transfers
    assert (transfer.end_to_end_id, transfer.amount) == (order["endToEndId"], AMOUNT)
    assert transfer.creditor_iban == "DE89370400440532013000"
    assert transfer.remittance.text == "Invoice 42"
    # The hold captured: the money left the account for the EUR rail clearing account.
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []
    # The cut-off again (the job at 15:30): the same file, the order in it once.
    again = cutoff_run(profile=bank.profile, rail=Rail.SEPA_CT, window_date=day, window="15:00")
    assert again.pk == file_id
    assert RailFile.objects.filter(institution=bank.institution).count() == 1
    # The bank answers (pain.002 ACCP, camt.054 booked on the execution date); the job reads
    # its inbox.
    assert len(simulated_sepa_bank_run(institution=bank.institution, today=day)) == 2
    rails_at(at(day, 16))
    order = order_of(bank, made)
    assert order["status"] == "settled"
    assert order["returnInfo"] is None
    inbound = RailFile.objects.filter(institution=bank.institution, direction="inbound")
    assert sorted(each.status for each in inbound) == ["applied", "applied"]
    assert RailJournal.objects.filter(order_id=made["paymentOrderId"]).count() == 2
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    assert ledger_breaches() == []


def test_a_rejected_transfer_comes_back_to_the_account_with_its_iso_reason(rails_dir):
    bank, made, day = sent_order(REJECTED_AC04)
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    order = order_of(bank, made)
    assert order["status"] == "rejected"
    assert order["returnInfo"] == {"code": "AC04", "reason": "account_closed", "late": False}
    assert bank.balances() == (LOADED, 0, LOADED)
    notice = RailNotice.objects.get(order_id=made["paymentOrderId"])
    assert (notice.kind, notice.code, notice.original_trace_number) == (
        "reject",
        "AC04",
        order["endToEndId"],
    )
    assert ledger_breaches() == []


def test_a_transfer_returned_after_settlement_comes_back_from_settlement(rails_dir):
    bank, made, day = sent_order(RETURNED_AC04)
    simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    assert order_of(bank, made)["status"] == "settled"
    assert bank.balances() == (LOADED - AMOUNT, 0, LOADED - AMOUNT)
    later = day + timedelta(days=2)
    assert simulated_sepa_bank_run(institution=bank.institution, today=later)
    rails_at(at(later, 16))
    order = order_of(bank, made)
    assert order["status"] == "returned"
    assert order["returnInfo"]["code"] == "AC04"
    assert order["returnInfo"]["reason"] == "account_closed"
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []


def test_the_same_answer_uploaded_twice_is_applied_once(rails_dir):
    bank, made, day = sent_order(REJECTED_AC04)
    files = bank_files(bank, day)
    (status_report,) = [content for name, content in files.items() if "pain002" in name]
    first = upload(bank, status_report)
    assert first.status_code == 201, first.json()
    second = upload(bank, status_report, name="again.xml")
    assert second.status_code == 201
    assert second.json()["fileId"] == first.json()["fileId"]
    assert first.json()["entryCount"] == 1
    assert order_of(bank, made)["status"] == "rejected"
    assert RailNotice.objects.filter(institution=bank.institution).count() == 1
    assert bank.balances() == (LOADED, 0, LOADED)
    assert ledger_breaches() == []


def test_a_status_of_an_unknown_end_to_end_id_is_recorded_for_reconciliation(rails_dir):
    from payments.iso20022.pain002 import (
        PaymentStatus,
        PaymentStatusReport,
        TransactionStatus,
        write_status_report,
    )
    from payments.iso20022.status_reasons import StatusReason

    bank, made, day = sent_order()
    report = PaymentStatusReport(
        message_id="BANK-1",
        created_at=at(day, 16),
        original_message_id="SOMETHING-ELSE",
        original_message_type="pain.001.001.09",
        payments=(
            PaymentStatus(
                original_payment_information_id="X-1",
                transactions=(
                    TransactionStatus(
                        original_end_to_end_id="NOT-OURS-1",
                        status="RJCT",
                        reasons=(StatusReason("AM04"),),
                    ),
                    TransactionStatus(original_end_to_end_id="NOT-OURS-2", status="ACCP"),
                ),
            ),
        ),
    )
    response = upload(bank, write_status_report(report))
    assert response.status_code == 201, response.json()
    notices = RailNotice.objects.filter(institution=bank.institution).order_by("id")
    assert [(n.kind, n.code, n.reason, n.original_trace_number, n.order_id) for n in notices] == [
        ("reject", "AM04", "insufficient_funds", "NOT-OURS-1", None),
        ("status", "ACCP", "accepted", "NOT-OURS-2", None),
    ]
    assert order_of(bank, made)["status"] == "sent"


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">&lol4;</Document>
"""
EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">&x;</Document>
"""


@pytest.mark.parametrize(
    "content, says",
    [
        (BILLION_LAUGHS, "DOCTYPE"),
        (EXTERNAL_ENTITY, "DOCTYPE"),
        (b"<not xml", "not well-formed"),
        (
            b'<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns='
            b'"urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt/></Document>',
            "does not validate",
        ),
        (
            b'<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns='
            b'"urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>',
            "pain.001.001.09",
        ),
        (b"101 091000019 0210000211", "not well-formed"),
    ],
)
def test_a_hostile_or_invalid_upload_is_refused_whole_and_changes_nothing(content, says):
    bank, made, day = sent_order(REJECTED_AC04)
    before = RailFile.objects.count(), RailNotice.objects.count()
    response = upload(bank, content)
    assert response.status_code == 400
    assert says in response.json()["details"]["contentBase64"]
    assert (RailFile.objects.count(), RailNotice.objects.count()) == before
    assert order_of(bank, made)["status"] == "sent"


def test_an_answer_from_the_inbox_that_is_not_valid_is_kept_refused(rails_dir):
    bank, made, day = sent_order()
    inbox = rails_dir / bank.institution.pk / "sepa" / "inbox"
    (inbox / "evil.xml").write_bytes(BILLION_LAUGHS)
    rails_at(at(day, 16))
    refused = RailFile.objects.get(institution=bank.institution, direction="inbound")
    assert refused.status == "refused"
    assert "DOCTYPE" in refused.error
    assert order_of(bank, made)["status"] == "sent"


def test_a_camt054_validator_message_never_carries_an_iban():
    from payments.services.sepa_files import redacted

    said = redacted("value 'DE89370400440532013000' is not accepted; BE68539007547034 neither")
    assert "DE89" not in said and "BE68" not in said


def test_another_institutions_files_are_not_found(rails_dir):
    bank, made, day = sent_order()
    file_id = order_of(bank, made)["fileId"]
    other = sepa_bank()
    assert other.api.get(f"/rail-files/{file_id}").status_code == 404
    assert other.api.get(f"/rail-files/{file_id}/content").status_code == 404
    assert other.api.get("/rail-files").json()["data"] == []


def test_a_sepa_order_is_never_settled_by_its_date_only_by_its_booking():
    bank, made, day = sent_order()
    # Days pass with no booking from the bank: still sent (SEPA settles on its booking).
    rails_at(at(day + timedelta(days=5), 16))
    assert order_of(bank, made)["status"] == "sent"
    assert PaymentOrder.objects.filter(institution=bank.institution).count() == 1
    assert RailFile.objects.filter(institution=bank.institution).count() == 1


def test_a_booking_of_another_amount_leaves_the_order_sent_and_is_recorded(rails_dir):
    """The bank's camt.054 books the order's end-to-end id at a cent more: the order is not
    settled at a sum it was not sent for; the booking is a notice for reconciliation."""
    bank, made, day = sent_order()
    (camt,) = [content for name, content in bank_files(bank, day).items() if "camt" in name]
    notification = read_notification(camt)
    (account,) = notification.notifications
    (entry,) = account.entries
    (transaction,) = entry.transactions
    more = AMOUNT + 1
    entry = replace(entry, amount=more, transactions=(replace(transaction, amount=more),))
    account = replace(account, entries=(entry,))
    changed = write_notification(replace(notification, notifications=(account,)))

    assert upload(bank, changed).status_code == 201
    assert order_of(bank, made)["status"] == "sent"
    notice = RailNotice.objects.get(institution=bank.institution, kind="booking")
    assert (notice.reason, notice.order_id) == ("amount_mismatch", made["paymentOrderId"])
    assert ledger_breaches() == []
