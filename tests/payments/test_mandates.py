"""SEPA direct debits under mandates (issue 50 item 5), over HTTP and through the files: a
mandate's life (made, amended, cancelled), collections as `sepa_dd` payment orders written into
one pain.008 per window (FRST then RCUR, the amendment carried, read back and valid against the
official XSD), settled on the simulated bank's camt.054 booking, refunded MD06 after the money
was spent (returns receivable), and the refusals, which change nothing."""

import base64
from datetime import date, timedelta

import pytest
import xmlschema

from accounts.models import Account
from accounts.verification import ledger_breaches
from cards.dates import today_of
from events.models import Event
from payments.calendar import is_sepa_day, sepa_days_after
from payments.iso20022.messages import PAIN_008
from payments.iso20022.pain008 import read_initiation
from payments.models import Mandate, PaymentOrder, Rail, RailFile
from payments.services.collections import earliest_due_date, lapse_day, mandate_lapses_on
from payments.services.cutoff import cutoff_run
from sandbox.simulated_bank import german_iban, simulated_sepa_bank_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import BERLIN, IBAN, local, rails_at, sepa_bank

pytestmark = pytest.mark.django_db

CREDITOR_ID = "DE98ZZZ09999999999"
AMOUNT = 2_500
REFUNDED_MD06 = german_iban("0000000306")


def at(day: date, hour: int, minute: int = 0):
    return local(day, hour, minute, zone=BERLIN)


def creditor(**fields):
    return sepa_bank(creditor_identifier=CREDITOR_ID, **fields)


def mandate_body(external_id: str, reference: str = "MANDATE-0001", **fields) -> dict:
    return {
        "externalAccountId": external_id,
        "mandateReference": reference,
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
        **fields,
    }


def collection(bank, external_id: str, mandate_id: str, amount: int = AMOUNT, **fields):
    return bank.api.post(
        "/payment-orders",
        {
            "accountId": bank.account_id,
            "externalAccountId": external_id,
            "direction": "debit",
            "amount": amount,
            "currency": "EUR",
            "rail": "sepa_dd",
            "mandateId": mandate_id,
            **fields,
        },
    )


def first_cutoff(bank) -> date:
    """A SEPA day after today, its direct-debit cut-off (15:00 Berlin) the first the
    collections made now go in when the job runs then."""
    day = today_of(bank.institution) + timedelta(days=1)
    while not is_sepa_day(bank.institution, day):
        day += timedelta(days=1)
    return day


def file_of(bank, order: dict) -> bytes:
    response = bank.api.get(f"/rail-files/{order['fileId']}/content")
    return base64.b64decode(response.json()["contentBase64"])


def snapshot(bank):
    return (
        PaymentOrder.objects.filter(institution=bank.institution).count(),
        Mandate.objects.filter(institution=bank.institution).count(),
        list(Mandate.objects.filter(institution=bank.institution).values()),
        Event.objects.filter(institution=bank.institution).count(),
        bank.balances(),
    )


def test_a_mandates_life_and_its_collections_first_then_recurrent_in_pain008_files(rails_dir):
    bank = creditor()
    external = bank.external()["externalAccountId"]
    mandate = created(bank.api.post("/mandates", mandate_body(external)), "v2")
    assert (mandate["status"], mandate["scheme"], mandate["type"]) == (
        "active",
        "CORE",
        "recurrent",
    )
    assert mandate["pendingAmendment"] is None
    mandate_id = mandate["mandateId"]
    assert bank.api.get(f"/mandates/{mandate_id}").json()["mandateReference"] == "MANDATE-0001"
    listed = bank.api.get("/mandates", {"status": "active"}).json()["data"]
    assert [each["mandateId"] for each in listed] == [mandate_id]
    assert bank.api.get("/mandates", {"status": "cancelled"}).json()["data"] == []

    first = created(collection(bank, external, mandate_id, remittanceInfo="Invoice 1"), "v2")
    assert (first["status"], first["mandateId"], first["sequenceType"]) == (
        "approved",
        mandate_id,
        "",
    )
    due = date.fromisoformat(first["requestedExecutionDate"])
    assert due == earliest_due_date(bank.profile)
    assert due >= today_of(bank.institution) + timedelta(days=14)  # pre-notification
    day = first_cutoff(bank)
    rails_at(at(day, 15, 1))
    first = bank.api.get(f"/payment-orders/{first['paymentOrderId']}").json()
    assert (first["status"], first["sequenceType"]) == ("sent", "FRST")
    content = file_of(bank, first)
    assert xmlschema.XMLSchema(str(PAIN_008.xsd)).is_valid(content)
    initiation = read_initiation(content)
    (payment,) = initiation.payments
    assert (payment.sequence_type, payment.local_instrument) == ("FRST", "CORE")
    assert payment.requested_collection_date == due
    assert payment.creditor_id == CREDITOR_ID
    assert payment.creditor_iban == bank.profile.settlement_iban
    (debit,) = payment.debits
    assert (debit.end_to_end_id, debit.amount) == (first["endToEndId"], AMOUNT)
    assert (debit.mandate_id, debit.mandate_signed_on) == ("MANDATE-0001", date(2026, 1, 15))
    assert debit.debtor_iban == IBAN
    assert debit.amendment is None
    # The cut-off again: the same file, nothing more.
    again = cutoff_run(profile=bank.profile, rail=Rail.SEPA_DD, window_date=day, window="15:00")
    assert again.pk == first["fileId"]
    assert RailFile.objects.filter(institution=bank.institution, rail="sepa_dd").count() == 1

    # Amended: a new reference and a new debtor account; the next collection carries both.
    other = bank.external("DE02120300000000202051")["externalAccountId"]
    amended = bank.api.patch(
        f"/mandates/{mandate_id}", {"mandateReference": "MANDATE-0002", "externalAccountId": other}
    )
    assert amended.status_code == 200, amended.content
    amended = amended.json()
    assert amended["mandateReference"] == "MANDATE-0002"
    assert amended["pendingAmendment"]["originalMandateReference"] == "MANDATE-0001"
    assert amended["pendingAmendment"]["originalExternalAccountId"] == external
    # A collection from the old account is refused now.
    assert_error(collection(bank, external, mandate_id), "v2", 400, "validation_error", ANY)
    second = created(collection(bank, other, mandate_id), "v2")
    next_day = sepa_days_after(bank.institution, day + timedelta(days=1), 0)
    rails_at(at(next_day, 15, 1))
    second = bank.api.get(f"/payment-orders/{second['paymentOrderId']}").json()
    assert (second["status"], second["sequenceType"]) == ("sent", "RCUR")
    content = file_of(bank, second)
    assert xmlschema.XMLSchema(str(PAIN_008.xsd)).is_valid(content)
    (payment,) = read_initiation(content).payments
    assert payment.sequence_type == "RCUR"
    (debit,) = payment.debits
    assert debit.mandate_id == "MANDATE-0002"
    assert debit.amendment.original_mandate_id == "MANDATE-0001"
    assert debit.amendment.original_debtor_iban == IBAN
    assert bank.api.get(f"/mandates/{mandate_id}").json()["pendingAmendment"] is None

    # Cancelled: a waiting collection is cancelled with it, and none can be made.
    waiting = created(collection(bank, other, mandate_id), "v2")
    cancelled = created(
        bank.api.post(f"/mandates/{mandate_id}/cancellations", {"reason": "debtor asked"}), "v2"
    )
    assert cancelled["status"] == "cancelled"
    assert bank.api.get(f"/payment-orders/{waiting['paymentOrderId']}").json()["status"] == (
        "cancelled"
    )
    before = snapshot(bank)
    response = collection(bank, other, mandate_id)
    assert_error(response, "v2", 422, "mandate_not_usable", ANY)
    assert snapshot(bank) == before
    assert_error(
        bank.api.post(f"/mandates/{mandate_id}/cancellations", {}),
        "v2",
        409,
        "invalid_state_transition",
        ANY,
    )
    events = Event.objects.filter(institution=bank.institution, type__startswith="mandate.")
    assert sorted(e.type for e in events) == [
        "mandate.amended",
        "mandate.cancelled",
        "mandate.created",
    ]
    assert {e.actor_type for e in events} == {"apiKey"}
    assert ledger_breaches() == []


def test_a_collection_settled_then_refunded_md06_after_the_money_was_spent(rails_dir):
    bank = creditor(load_amount=0)
    external = bank.external(REFUNDED_MD06)["externalAccountId"]
    mandate_id = created(bank.api.post("/mandates", mandate_body(external, type="one_off")), "v2")[
        "mandateId"
    ]
    order = created(collection(bank, external, mandate_id), "v2")
    # A one-off mandate collects once.
    before = snapshot(bank)
    assert_error(collection(bank, external, mandate_id), "v2", 422, "mandate_not_usable", ANY)
    assert snapshot(bank) == before
    due = date.fromisoformat(order["requestedExecutionDate"])
    day = first_cutoff(bank)
    rails_at(at(day, 15, 1))
    order = bank.api.get(f"/payment-orders/{order['paymentOrderId']}").json()
    assert (order["status"], order["sequenceType"]) == ("sent", "OOFF")
    # The bank accepts it at once and books it on its due date.
    simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    assert bank.api.get(f"/payment-orders/{order['paymentOrderId']}").json()["status"] == "sent"
    simulated_sepa_bank_run(institution=bank.institution, today=due)
    rails_at(at(due, 16))
    order = bank.api.get(f"/payment-orders/{order['paymentOrderId']}").json()
    assert order["status"] == "settled"
    posted, _, available = bank.balances()
    assert posted == AMOUNT
    assert available == 0  # held for the debtor bank's returns
    # The hold expires (5 SEPA days), the customer spends it all.
    later = sepa_days_after(bank.institution, due, 6)
    rails_at(at(later, 16))
    assert bank.balances()[2] == AMOUNT
    created(
        bank.api.post(
            f"/accounts/{bank.account_id}/adjustments",
            {"direction": "debit", "amount": AMOUNT, "currency": "EUR"},
        ),
        "v2",
    )
    # The debtor's refund (MD06, 10 days after the booking): booked, never refused.
    refund_day = due + timedelta(days=10)
    simulated_sepa_bank_run(institution=bank.institution, today=refund_day)
    rails_at(at(refund_day, 16))
    order = bank.api.get(f"/payment-orders/{order['paymentOrderId']}").json()
    assert order["status"] == "returned"
    assert order["returnInfo"]["code"] == "MD06"
    assert order["returnInfo"]["reason"] == "refund_requested"
    assert bank.balances() == (0, 0, 0)
    receivable = Account.objects.get(
        institution=bank.institution, internal_code="returns_receivable", currency="EUR"
    )
    assert receivable.posted == -AMOUNT
    assert ledger_breaches() == []


def test_a_final_collection_is_fnal_and_the_last_and_a_mandate_lapses_after_36_months(rails_dir):
    bank = creditor()
    external = bank.external()["externalAccountId"]
    mandate_id = created(bank.api.post("/mandates", mandate_body(external)), "v2")["mandateId"]
    final = created(collection(bank, external, mandate_id, finalCollection=True), "v2")
    assert final["finalCollection"] is True
    before = snapshot(bank)
    error = assert_error(
        collection(bank, external, mandate_id), "v2", 422, "mandate_not_usable", ANY
    )
    assert error["details"]["reason"] == "final_collected"
    # Final under a one-off mandate (its one collection is OOFF), or on another rail: 400.
    one_off = mandate_body(external, "MANDATE-OOFF", type="one_off")
    one_off = created(bank.api.post("/mandates", one_off), "v2")["mandateId"]
    before = snapshot(bank)
    for response in (
        collection(bank, external, one_off, finalCollection=True),
        bank.order(external, AMOUNT, finalCollection=True),
    ):
        error = assert_error(response, "v2", 400, "validation_error", ANY)
        assert set(error["details"]) == {"finalCollection"}
    # Signed 36 months ago to the day: lapsed before its first collection.
    today = today_of(bank.institution)
    signed = today.replace(year=today.year - 3) if (today.month, today.day) != (2, 29) else None
    if signed:
        response = bank.api.post(
            "/mandates", mandate_body(external, "MANDATE-OLD", signatureDate=signed.isoformat())
        )
        error = assert_error(response, "v2", 400, "validation_error", ANY)
        assert set(error["details"]) == {"signatureDate"}
    assert snapshot(bank) == before

    # The FNAL goes in the file; the mandate then lapses 36 months after its due date.
    day = first_cutoff(bank)
    rails_at(at(day, 15, 1))
    final = bank.api.get(f"/payment-orders/{final['paymentOrderId']}").json()
    assert (final["status"], final["sequenceType"]) == ("sent", "FNAL")
    content = file_of(bank, final)
    assert xmlschema.XMLSchema(str(PAIN_008.xsd)).is_valid(content)
    (payment,) = read_initiation(content).payments
    assert payment.sequence_type == "FNAL"
    due = date.fromisoformat(final["requestedExecutionDate"])
    assert mandate_lapses_on(Mandate.objects.get(pk=mandate_id)) == lapse_day(due)

    # A mandate with no collection since its signature, 36 months and a day ago, has lapsed.
    recurrent = Mandate.objects.get(pk=one_off)
    recurrent.type = Mandate.Type.RECURRENT
    recurrent.signature_date = today - timedelta(days=3 * 366)
    recurrent.save(update_fields=["type", "signature_date"])
    before = snapshot(bank)
    error = assert_error(collection(bank, external, one_off), "v2", 422, "mandate_not_usable", ANY)
    details = error["details"]
    assert details["reason"] == "lapsed"
    assert details["lapsedOn"] == lapse_day(recurrent.signature_date).isoformat()
    assert snapshot(bank) == before
    assert (lapse_day(date(2024, 2, 29)), lapse_day(date(2026, 1, 31))) == (
        date(2027, 2, 28),
        date(2029, 1, 31),
    )


def test_refusals_change_nothing(rails_dir):
    bank = creditor()
    external = bank.external()["externalAccountId"]
    mandate_id = created(bank.api.post("/mandates", mandate_body(external)), "v2")["mandateId"]
    before = snapshot(bank)
    # No mandate, or a mandate on another rail.
    assert_error(
        bank.api.post(
            "/payment-orders",
            {
                "accountId": bank.account_id,
                "externalAccountId": external,
                "direction": "debit",
                "amount": AMOUNT,
                "currency": "EUR",
                "rail": "sepa_dd",
            },
        ),
        "v2",
        400,
        "validation_error",
        ANY,
    )
    assert_error(
        bank.order(external, AMOUNT, mandateId=mandate_id), "v2", 400, "validation_error", ANY
    )
    # A due date too early (tomorrow), and an unknown mandate.
    tomorrow = today_of(bank.institution) + timedelta(days=1)
    response = collection(bank, external, mandate_id, requestedExecutionDate=tomorrow.isoformat())
    earliest = earliest_due_date(bank.profile).isoformat()
    details = {"requestedExecutionDate": tomorrow.isoformat(), "earliest": earliest}
    if not is_sepa_day(bank.institution, tomorrow):
        details["requestedExecutionDate"] = sepa_days_after(
            bank.institution, tomorrow, 0
        ).isoformat()
    assert_error(response, "v2", 422, "due_date_too_early", details)
    assert_error(collection(bank, external, "mdt_unknown"), "v2", 404, "not_found", ANY)
    # A duplicate reference, a reference out of the SEPA character set, a future signature.
    assert_error(
        bank.api.post("/mandates", mandate_body(external)), "v2", 422, "duplicate_reference", ANY
    )
    assert_error(
        bank.api.post("/mandates", mandate_body(external, "MANDATE_1")),
        "v2",
        400,
        "validation_error",
        ANY,
    )
    assert_error(
        bank.api.post("/mandates", mandate_body(external, "M2", signatureDate="2099-01-01")),
        "v2",
        400,
        "validation_error",
        ANY,
    )
    assert snapshot(bank) == before


def test_no_creditor_identifier_and_another_institutions_ids(rails_dir):
    bank = creditor()
    external = bank.external()["externalAccountId"]
    mandate_id = created(bank.api.post("/mandates", mandate_body(external)), "v2")["mandateId"]
    stranger = sepa_bank()  # a SEPA profile without a creditor identifier
    own = stranger.external()["externalAccountId"]
    assert_error(
        stranger.api.post("/mandates", mandate_body(own)),
        "v2",
        422,
        "creditor_identifier_missing",
        ANY,
    )
    for response in (
        stranger.api.get(f"/mandates/{mandate_id}"),
        stranger.api.patch(f"/mandates/{mandate_id}", {"mandateReference": "X1"}),
        stranger.api.post(f"/mandates/{mandate_id}/cancellations", {}),
    ):
        assert_error(response, "v2", 404, "not_found", ANY)
    assert stranger.api.get("/mandates").json()["data"] == []
    other = creditor()
    assert_error(other.api.post("/mandates", mandate_body(external)), "v2", 404, "not_found", ANY)
    assert Mandate.objects.get(pk=mandate_id).status == "active"
