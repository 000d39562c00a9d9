"""Recalls of SEPA credit transfers (issue 50, docs/payments.md "Recalls"): asked by
`POST /payment-orders/{id}/recalls`, sent by the payments job as a camt.056 in the `sepa` outbox,
answered by the simulated partner bank's camt.029 and, accepted, its camt.054 returning the money
(FOCR), booked once."""

from datetime import date, timedelta

import pytest
import xmlschema
from django.utils import timezone

from accounts.verification import ledger_breaches
from cards.dates import today_of
from events.models import Event
from payments.iso20022.camt029 import (
    REFUSED,
    RecallAnswer,
    ResolutionOfInvestigation,
    write_resolution,
)
from payments.iso20022.camt056 import read_cancellation_request
from payments.iso20022.cases import Assignment
from payments.iso20022.messages import CAMT_056
from payments.iso20022.status_reasons import StatusReason
from payments.models import PaymentOrder, RailFile, RailNotice, Recall
from payments.services.recalls import last_day
from sandbox.simulated_bank import RECALL_CHARGES, german_iban, simulated_sepa_bank_run
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.payments.helpers import rails_at, sepa_bank
from tests.payments.test_sepa_files import (
    AMOUNT,
    LOADED,
    at,
    bank_files,
    order_of,
    sent_order,
    upload,
)

pytestmark = pytest.mark.django_db

REFUSED_NOAS = german_iban("0000000401")
ACCEPTED_CHARGED = german_iban("0000000403")


def settled_order(iban: str):
    """A SEPA bank's order of AMOUNT to `iban`, sent and booked (settled) on its SEPA day."""
    bank, made, day = sent_order(iban)
    simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    assert order_of(bank, made)["status"] == "settled"
    return bank, made, day


def refusal(end_to_end_id: str, day: date) -> bytes:
    """A camt.029 of another bank's refusing (NOOR) a recall of `end_to_end_id`."""
    return write_resolution(
        ResolutionOfInvestigation(
            assignment=Assignment(
                id=f"BANK-RES-{end_to_end_id}"[:35],
                assigner_bic="DEUTDEFF",
                assignee_bic="COBADEFFXXX",
                created_at=at(day, 18),
            ),
            status=REFUSED,
            transactions=(
                RecallAnswer(
                    status_id="BANK-1",
                    original_message_id="SOMETHING-ELSE",
                    original_message_type="pain.001.001.09",
                    original_end_to_end_id=end_to_end_id,
                    original_transaction_id="X1",
                    original_amount=100,
                    original_settlement_date=day,
                    reason=StatusReason("NOOR"),
                ),
            ),
        )
    )


def recall(bank, made, reason: str = "CUST"):
    return bank.api.post(f"/payment-orders/{made['paymentOrderId']}/recalls", {"reason": reason})


def test_an_accepted_recall_brings_the_money_back_once(rails_dir):
    bank, made, day = settled_order(ACCEPTED_CHARGED)
    order_id = made["paymentOrderId"]
    asked = recall(bank, made, "DUPL")
    assert asked.status_code == 201, asked.json()
    body = asked.json()
    assert (body["status"], body["reasonCode"], body["reason"], body["fileId"]) == (
        "requested",
        "DUPL",
        "duplicate_entry",
        None,
    )
    # A second recall while the first is on its way: refused by the database rule.
    again = recall(bank, made, "CUST")
    assert again.status_code == 409
    assert again.json()["code"] == "already_exists"
    assert again.json()["details"] == {"recallId": body["recallId"]}
    # Another institution does not find the order.
    stranger = Api("v2", issue_key(InstitutionFactory(), scopes=["payments:write", "read"])[1])
    path = f"/payment-orders/{order_id}/recalls"
    assert stranger.post(path, {"reason": "CUST"}).status_code == 404
    assert stranger.get(path).status_code == 404

    # The payments job writes the camt.056 into the outbox: valid against the official XSD (an
    # independent validator), re-reading to the recall.
    rails_at(at(day, 17))
    sent = Recall.objects.get(pk=body["recallId"])
    assert sent.status == "sent"
    content = bytes(RailFile.objects.get(pk=sent.file_id).content)
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert (outbox / sent.file.name).read_bytes() == content
    assert xmlschema.XMLSchema(str(CAMT_056.xsd)).is_valid(content)
    request = read_cancellation_request(content)
    assert request.assignment.id == sent.pk.replace("_", "-")
    (transaction,) = request.transactions
    order = PaymentOrder.objects.get(pk=order_id)
    assert (
        transaction.original_end_to_end_id,
        transaction.original_amount,
        transaction.original_settlement_date,
        transaction.original_message_id,
        transaction.reason.code,
    ) == (order.end_to_end_id, AMOUNT, day, order.file_id.replace("_", "-"), "DUPL")
    rails_at(at(day, 17, 30))  # again: no second file
    assert RailFile.objects.filter(name__contains="recall").count() == 1

    # The bank accepts it (camt.029) and returns the money less its charges (camt.054, FOCR).
    files = bank_files(bank, day)
    answers = [content for name, content in files.items() if "camt029" in name]
    returns = [content for name, content in files.items() if "camt054" in name]
    assert (len(answers), len(returns)) == (1, 1)
    for content in answers + returns + answers + returns:  # each twice: applied once
        assert upload(bank, content).status_code == 201
    order = order_of(bank, made)
    assert order["status"] == "returned"
    assert order["returnInfo"] == {"code": "FOCR", "reason": "recalled", "late": False}
    assert order["returnedAmount"] == AMOUNT - RECALL_CHARGES
    listed = bank.api.get(f"/payment-orders/{order_id}/recalls").json()["data"]
    assert [(each["recallId"], each["status"], each["refusal"]) for each in listed] == [
        (body["recallId"], "accepted", None)
    ]
    assert bank.balances() == (LOADED - RECALL_CHARGES, 0, LOADED - RECALL_CHARGES)
    assert ledger_breaches() == []
    # Accepted: a new recall of the order is refused, and another answer changes nothing.
    assert recall(bank, made).status_code == 409
    assert upload(bank, refusal(order["endToEndId"], day)).status_code == 201
    assert Recall.objects.get(pk=body["recallId"]).status == "accepted"
    assert RailNotice.objects.filter(kind="recall", order_id=order_id).count() == 2
    assert RailNotice.objects.get(reason="answered_already").code == "NOOR"
    assert bank.balances() == (LOADED - RECALL_CHARGES, 0, LOADED - RECALL_CHARGES)
    # The events name who acted.
    events = Event.objects.filter(object_id=order_id, type__contains="recall").order_by("pk")
    assert [(each.type, each.actor_type) for each in events] == [
        ("payment_order.recall_requested", "apiKey"),
        ("payment_order.recall_sent", "system"),
        ("payment_order.recall_accepted", "apiKey"),  # the bank's file, uploaded
    ]


def test_a_refused_recall_keeps_its_reason_and_the_windows_and_states_are_kept(rails_dir):
    bank, made, day = sent_order(REFUSED_NOAS)
    # Not yet in a file: cancelled instead.
    waiting = bank.ordered(bank.external()["externalAccountId"], AMOUNT)
    refused = recall(bank, waiting)
    assert refused.status_code == 409
    assert refused.json()["code"] == "invalid_state_transition"
    assert recall(bank, made, "AM05").status_code == 400  # not a recall reason of the EPC's
    simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    # Settled long ago: the bank's own reasons are past their 10 TARGET2 days, the
    # originator's (13 months) are not.
    PaymentOrder.objects.filter(pk=made["paymentOrderId"]).update(
        effective_date=today_of(bank.institution) - timedelta(days=30)
    )
    late = recall(bank, made, "FRAD")
    assert late.status_code == 422
    assert late.json()["code"] == "recall_window_closed"
    assert Recall.objects.count() == 0
    assert recall(bank, made, "AC03").status_code == 201
    rails_at(at(day, 17))
    assert simulated_sepa_bank_run(institution=bank.institution, today=day)
    rails_at(at(day, 18))
    (first,) = bank.api.get(f"/payment-orders/{made['paymentOrderId']}/recalls").json()["data"]
    assert (first["status"], first["refusal"]) == (
        "rejected",
        {"code": "NOAS", "reason": "no_answer"},
    )
    assert order_of(bank, made)["status"] == "settled"
    # Nothing came back (the waiting order's money is held).
    assert bank.balances() == (LOADED - AMOUNT, AMOUNT, LOADED - 2 * AMOUNT)
    # Refused: the originator may ask again.
    assert recall(bank, made, "CUST").status_code == 201
    # An answer to a recall TX never sent is recorded for reconciliation.
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    assert upload(bank, refusal("NOT-OURS-1", day)).status_code == 201
    notice = RailNotice.objects.get(kind="recall", order__isnull=True)
    assert (notice.code, notice.reason, notice.original_trace_number) == (
        "NOOR",
        "unknown_recall",
        "NOT-OURS-1",
    )
    assert order.recalls.filter(status="requested").count() == 1


def test_the_recall_windows_count_target2_days_and_months():
    # Settled Wednesday 2025-12-17: 10 TARGET2 business days skip the weekends, 25-26 December
    # and 1 January (24 and 31 December are open).
    assert last_day("DUPL", date(2025, 12, 17)) == date(2026, 1, 5)
    assert last_day("CUST", date(2025, 1, 31)) == date(2026, 2, 28)
    assert last_day("AM09", date(2025, 3, 3)) == date(2026, 4, 3)


def test_an_instant_payment_is_recalled_as_a_credit_transfer(rails_dir):
    """A `sepa_inst` order's recall is the SCT one's (the SCT Inst rulebook): a camt.056 through
    the partner bank, which knows the transfers' recall scenarios from the clearing."""
    bank = sepa_bank(load_amount=LOADED)
    made = {
        iban: bank.ordered(bank.external(iban)["externalAccountId"], AMOUNT, rail="sepa_inst")
        for iban in (REFUSED_NOAS, ACCEPTED_CHARGED)
    }
    assert {each["status"] for each in made.values()} == {"settled"}
    for each in made.values():
        assert recall(bank, each, "TECH").status_code == 201
    today = today_of(bank.institution)
    rails_at(timezone.now())
    assert set(Recall.objects.values_list("status", flat=True)) == {"sent"}
    for content in bank_files(bank, today).values():
        assert upload(bank, content).status_code == 201
    refused, accepted = (order_of(bank, made[iban]) for iban in (REFUSED_NOAS, ACCEPTED_CHARGED))
    assert refused["status"] == "settled"
    assert accepted["status"] == "returned"
    assert accepted["returnInfo"] == {"code": "FOCR", "reason": "recalled", "late": False}
    assert sorted(Recall.objects.values_list("status", "answer_code")) == [
        ("accepted", ""),
        ("rejected", "NOAS"),
    ]
    assert bank.balances()[0] == LOADED - AMOUNT - RECALL_CHARGES
    assert ledger_breaches() == []
