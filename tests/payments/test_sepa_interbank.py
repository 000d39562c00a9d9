"""SEPA credit transfers of an `interbank` profile, a bank in the clearing itself (issue 50): the
cut-off writes one pacs.008 per window into the `sepa` outbox (the same window, lock and
scheduling as an initiation profile's pain.001), the simulated clearing answers with a pacs.002
and later a pacs.004 from the scenario table, and TX reads them from the inbox or
`POST /rail-files`: settled, rejected, returned, the same file twice once, a broken one refused
whole, another institution's ids changing nothing."""

import base64
from dataclasses import replace
from datetime import date, timedelta

import pytest
import xmlschema

from accounts.models import Account
from accounts.verification import ledger_breaches
from cards.dates import today_of
from payments.account_ibans import account_iban
from payments.calendar import is_sepa_day
from payments.connector import folder
from payments.iso20022 import pacs002, pacs004
from payments.iso20022.camt056 import read_cancellation_request
from payments.iso20022.messages import CAMT_056, PACS_003, PACS_008
from payments.iso20022.pacs003 import read_debits
from payments.iso20022.pacs008 import read_transfers
from payments.iso20022.status_reasons import StatusReason
from payments.models import PaymentOrder, RailFile, RailNotice, Recall
from sandbox.simulated_bank import RECALL_CHARGES, german_iban
from sandbox.simulated_clearing import simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import BERLIN, local, rails_at, sepa_bank, sepa_external_body

pytestmark = pytest.mark.django_db

LOADED = 100_000
BIC = "TXBKLULLXXX"
SETTLES = german_iban("0532013000")
REJECTED_AC04 = german_iban("0000000104")
RETURNED_MD07 = german_iban("0000000207")


def interbank_bank(load_amount: int = LOADED, **fields):
    """A bank in the clearing (its own BIC, its accounts' IBANs under a Luxembourg bank code)
    with a customer's EUR account loaded."""
    values = {"kind": "interbank", "bic": BIC, "settlement_iban": "", "iban_country": "LU"}
    return sepa_bank(load_amount=load_amount, **{**values, "iban_bank_code": "001", **fields})


def next_sepa_day(bank, after: date) -> date:
    day = after + timedelta(days=2)
    while not is_sepa_day(bank.institution, day):
        day += timedelta(days=1)
    return day


def at(day: date, hour: int, minute: int = 0):
    return local(day, hour, minute, zone=BERLIN)


def sent_orders(bank, *ibans: str, amount: int = 1_000) -> tuple[list[dict], date]:
    """An order of `amount` to each IBAN, through the cut-off of the next SEPA day (15:00)."""
    made = []
    for iban in ibans:
        external = bank.external(iban)["externalAccountId"]
        made.append(bank.ordered(external, amount))
    day = next_sepa_day(bank, today_of(bank.institution))
    rails_at(at(day, 15, 1))
    return made, day


def upload(bank, content: bytes, name: str = "answer.xml"):
    body = {"rail": "sepa_ct", "name": name, "contentBase64": base64.b64encode(content).decode()}
    return bank.api.post("/rail-files", body)


def statuses(bank, made) -> list[str]:
    return [bank.api.get(f"/payment-orders/{m['paymentOrderId']}").json()["status"] for m in made]


def test_a_pacs008_goes_out_and_the_clearings_answers_settle_reject_and_return(rails_dir):
    bank = interbank_bank()
    made, day = sent_orders(bank, SETTLES, REJECTED_AC04, RETURNED_MD07)
    assert statuses(bank, made) == ["sent", "sent", "sent"]
    assert bank.balances() == (LOADED - 3_000, 0, LOADED - 3_000)
    # One pacs.008 in the outbox, valid against the official XSD (an independent validator),
    # re-parsing to the orders.
    (rail_file,) = RailFile.objects.filter(institution=bank.institution)
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert [path.read_bytes() for path in outbox.iterdir()] == [bytes(rail_file.content)]
    assert xmlschema.XMLSchema(str(PACS_008.xsd)).is_valid(bytes(rail_file.content))
    message = read_transfers(bytes(rail_file.content))
    header = message.header
    assert header.message_id == rail_file.pk.replace("_", "-")
    assert (header.settlement_date, header.settlement_method, header.clearing_system) == (
        day,
        "CLRG",
        "ST2",
    )
    assert header.instructing_agent_bic == BIC
    debtor_iban = account_iban(Account.objects.get(pk=bank.account_id), bank.profile)
    orders = PaymentOrder.objects.filter(institution=bank.institution).order_by("pk")
    assert [
        (t.end_to_end_id, t.transaction_id, t.amount, t.creditor_iban, t.creditor_bic)
        for t in message.transfers
    ] == [
        (o.end_to_end_id, o.pk[-15:], 1_000, o.external_account.sepa_iban(), "DEUTDEFF")
        for o in orders
    ]
    assert {(t.debtor_iban, t.debtor_bic, t.debtor_name) for t in message.transfers} == {
        (debtor_iban, BIC, "Ada Lovelace")
    }
    assert [o.trace_number for o in orders] == [o.pk[-15:] for o in orders]

    # The clearing's pacs.002: settled, rejected AC04, settled (its return comes later).
    (answer,) = simulated_clearing_run(institution=bank.institution, today=day)
    report = pacs002.read_status_report(
        (folder(bank.institution.pk, "sepa", "inbox") / answer).read_bytes()
    )
    assert report.group_status == "PART"
    rails_at(at(day, 16))
    assert statuses(bank, made) == ["settled", "rejected", "settled"]
    rejected = bank.api.get(f"/payment-orders/{made[1]['paymentOrderId']}").json()
    assert rejected["returnInfo"] == {"code": "AC04", "reason": "account_closed", "late": False}
    assert bank.balances() == (LOADED - 2_000, 0, LOADED - 2_000)

    # Three days later the pacs.004: the money back, its reason kept raw and normalized.
    later = day + timedelta(days=3)
    assert simulated_clearing_run(institution=bank.institution, today=later)
    rails_at(at(later, 16))
    assert statuses(bank, made) == ["settled", "rejected", "returned"]
    returned = bank.api.get(f"/payment-orders/{made[2]['paymentOrderId']}").json()
    assert returned["returnInfo"] == {
        "code": "MD07",
        "reason": "account_holder_deceased",
        "late": False,
    }
    assert bank.balances() == (LOADED - 1_000, 0, LOADED - 1_000)
    inbound = RailFile.objects.filter(institution=bank.institution, direction="inbound")
    assert sorted(each.status for each in inbound) == ["applied", "applied"]

    # The same answers again, uploaded: the same files, nothing moves twice.
    notices = RailNotice.objects.count()
    read = folder(bank.institution.pk, "sepa", "inbox") / "read"
    for path in sorted(read.iterdir()):
        again = upload(bank, path.read_bytes(), name="again.xml")
        assert again.status_code == 201, again.json()
        assert again.json()["fileId"] in {each.pk for each in inbound}
    assert RailNotice.objects.count() == notices
    assert statuses(bank, made) == ["settled", "rejected", "returned"]
    assert bank.balances() == (LOADED - 1_000, 0, LOADED - 1_000)
    assert ledger_breaches() == []


def test_broken_or_foreign_answers_change_nothing_and_orders_need_both_banks(rails_dir):
    bank = interbank_bank()
    (made,), day = sent_orders(bank, SETTLES)
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    (answer,) = simulated_clearing_run(institution=bank.institution, today=day)
    inbox = folder(bank.institution.pk, "sepa", "inbox")
    content = (inbox / answer).read_bytes()
    (inbox / answer).unlink()
    before = RailFile.objects.count(), RailNotice.objects.count()

    # A broken pacs.002 is refused whole with the validator's message.
    broken = content.replace(b"<TxSts>ACSC</TxSts>", b"<TxSts>SETTLED</TxSts>")
    response = upload(bank, broken)
    assert response.status_code == 400
    assert (
        "does not validate against pacs.002.001.10.xsd"
        in (response.json()["details"]["contentBase64"])
    )
    # An institution that is not in the clearing reads no pacs.002.
    fintech = sepa_bank()
    response = upload(fintech, content)
    assert response.status_code == 400
    assert "not interbank" in response.json()["details"]["contentBase64"]
    assert (RailFile.objects.count(), RailNotice.objects.count()) == before

    # Another bank of the clearing given answers naming this bank's order: recorded, unknown.
    other = interbank_bank(iban_bank_code="002")
    returned = pacs004.write_return(
        pacs004.PaymentReturn(
            header=read_transfers(bytes(order.file.content)).header,
            transactions=(
                pacs004.ReturnedTransaction(
                    return_id="RTR-1",
                    original_message_id=order.file_id.replace("_", "-"),
                    original_message_type="pacs.008.001.08",
                    original_end_to_end_id=order.end_to_end_id,
                    original_transaction_id=order.trace_number,
                    original_amount=order.amount,
                    returned_amount=order.amount,
                    reason=StatusReason("AC04"),
                ),
            ),
        )
    )
    assert upload(other, content).status_code == 201
    assert upload(other, returned).status_code == 201
    notices = RailNotice.objects.filter(institution=other.institution).order_by("pk")
    assert [(n.kind, n.code, n.order_id) for n in notices] == [
        ("status", "ACSC", None),
        ("return", "AC04", None),
    ]
    assert statuses(bank, [made]) == ["sent"]
    # A status naming the order's end-to-end id with another transaction id is not its.
    report = pacs002.read_status_report(content)
    (status,) = report.transactions
    foreign = pacs002.write_status_report(
        pacs002.InterbankStatusReport(
            message_id="CLR-2",
            created_at=report.created_at,
            original_message_id=report.original_message_id,
            original_message_type=report.original_message_type,
            transactions=(
                pacs002.InterbankTransactionStatus(
                    original_end_to_end_id=status.original_end_to_end_id,
                    original_transaction_id="NOT-OURS",
                    status="RJCT",
                    reasons=(StatusReason("AC01"),),
                ),
            ),
        )
    )
    assert upload(bank, foreign).status_code == 201
    assert statuses(bank, [made]) == ["sent"]
    # Settled at a cent more than it was sent for: a break for reconciliation, still sent.
    more = replace(report, transactions=(replace(status, original_amount=order.amount + 1),))
    assert upload(bank, pacs002.write_status_report(more)).status_code == 201
    assert statuses(bank, [made]) == ["sent"]
    assert RailNotice.objects.filter(order=order).values_list("kind", "reason").get() == (
        "status",
        "amount_mismatch",
    )
    # Its own answer settles it.
    assert upload(bank, content).status_code == 201
    assert statuses(bank, [made]) == ["settled"]
    assert bank.balances() == (LOADED - 1_000, 0, LOADED - 1_000)

    # Orders between banks need the creditor's BIC and an account with an IBAN.
    body = sepa_external_body(bank.customer_id, SETTLES)
    del body["sepa"]["bic"]
    external = created(bank.api.post("/external-accounts", body), "v2")["externalAccountId"]
    error = assert_error(bank.order(external, 100), "v2", 400, "validation_error", ANY)
    assert "BIC" in error["details"]["externalAccountId"]
    bank.profile.iban_country = bank.profile.iban_bank_code = ""
    bank.profile.save()
    external = bank.external(SETTLES)["externalAccountId"]
    assert_error(bank.order(external, 100), "v2", 422, "rail_not_available", {"rail": "sepa_ct"})
    assert ledger_breaches() == []


# --- Direct debits of an interbank profile: a pacs.003 per window ------------------------------
CREDITOR_ID = "DE98ZZZ09999999999"
COLLECTED = german_iban("0000000300")
REJECTED_DD = german_iban("0000000304")
REFUNDED_MD06 = german_iban("0000000306")


def collected(bank, iban: str, reference: str, amount: int, **mandate) -> dict:
    """A mandate of the debtor at `iban` and a collection of `amount` under it, due on the
    earliest day."""
    external = bank.external(iban)["externalAccountId"]
    body = {
        "externalAccountId": external,
        "mandateReference": reference,
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
        **mandate,
    }
    mandate_id = created(bank.api.post("/mandates", body), "v2")["mandateId"]
    return bank.ordered(external, amount, rail="sepa_dd", direction="debit", mandateId=mandate_id)


def test_a_pacs003_collects_through_the_clearing_settled_rejected_and_refunded_after_spending(
    rails_dir,
):
    bank = interbank_bank(creditor_identifier=CREDITOR_ID, debit_hold_days=0)
    assert bank.balances() == (LOADED, 0, LOADED)
    made = [
        collected(bank, COLLECTED, "MDT-1", 1_000),
        collected(bank, REJECTED_DD, "MDT-2", 2_000),
        collected(bank, REFUNDED_MD06, "MDT-3", 4_000, type="one_off"),
    ]
    due = date.fromisoformat(made[0]["requestedExecutionDate"])
    # Presented one SEPA day before the due date (the pacs.003 settles on it): not before.
    window = due - timedelta(days=1)
    while not is_sepa_day(bank.institution, window):
        window -= timedelta(days=1)
    earlier = window - timedelta(days=1)
    while not is_sepa_day(bank.institution, earlier):
        earlier -= timedelta(days=1)
    rails_at(at(earlier, 15, 1))
    assert statuses(bank, made) == ["approved"] * 3
    rails_at(at(window, 15, 1))
    assert statuses(bank, made) == ["sent"] * 3
    (rail_file,) = RailFile.objects.filter(institution=bank.institution, rail="sepa_dd")
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert [path.read_bytes() for path in outbox.iterdir()] == [bytes(rail_file.content)]
    assert xmlschema.XMLSchema(str(PACS_003.xsd)).is_valid(bytes(rail_file.content))
    message = read_debits(bytes(rail_file.content))
    header = message.header
    assert header.message_id == rail_file.pk.replace("_", "-")
    assert (header.settlement_date, header.clearing_system, header.instructing_agent_bic) == (
        due,
        "ST2",
        BIC,
    )
    creditor_iban = account_iban(Account.objects.get(pk=bank.account_id), bank.profile)
    orders = [PaymentOrder.objects.get(pk=each["paymentOrderId"]) for each in made]
    assert [
        (
            d.end_to_end_id,
            d.transaction_id,
            d.amount,
            d.sequence_type,
            d.mandate_id,
            d.mandate_signed_on,
            d.debtor_iban,
        )
        for d in sorted(message.debits, key=lambda d: d.amount)
    ] == [
        (
            o.end_to_end_id,
            o.pk[-15:],
            o.amount,
            o.sequence_type,
            o.mandate.reference,
            date(2026, 1, 15),
            o.external_account.sepa_iban(),
        )
        for o in orders
    ]
    assert [o.sequence_type for o in orders] == ["FRST", "FRST", "OOFF"]
    assert {
        (d.creditor_id, d.creditor_iban, d.creditor_bic, d.debtor_bic, d.local_instrument)
        for d in message.debits
    } == {(CREDITOR_ID, creditor_iban, BIC, "DEUTDEFF", "CORE")}

    # The clearing answers on the due date: settled, rejected AC04 by the debtor's bank, settled.
    assert simulated_clearing_run(institution=bank.institution, today=window) == []
    assert simulated_clearing_run(institution=bank.institution, today=due)
    rails_at(at(due, 16))
    assert statuses(bank, made) == ["settled", "rejected", "settled"]
    assert bank.api.get(f"/payment-orders/{made[1]['paymentOrderId']}").json()["returnInfo"] == {
        "code": "AC04",
        "reason": "account_closed",
        "late": False,
    }
    assert bank.balances() == (LOADED + 5_000, 0, LOADED + 5_000)
    # The customer spends it all; the debtor's refund (MD06, ten days later) is booked anyway.
    created(
        bank.api.post(
            f"/accounts/{bank.account_id}/adjustments",
            {"direction": "debit", "amount": LOADED + 5_000, "currency": "EUR"},
        ),
        "v2",
    )
    refund_day = due + timedelta(days=10)
    assert simulated_clearing_run(institution=bank.institution, today=refund_day)
    rails_at(at(refund_day, 16))
    assert statuses(bank, made) == ["settled", "rejected", "returned"]
    refunded = bank.api.get(f"/payment-orders/{made[2]['paymentOrderId']}").json()
    assert refunded["returnInfo"] == {"code": "MD06", "reason": "refund_requested", "late": False}
    assert bank.balances() == (0, 0, 0)
    receivable = Account.objects.get(
        institution=bank.institution, internal_code="returns_receivable", currency="EUR"
    )
    assert receivable.posted == -4_000

    # The same answers again: the same files, nothing moves twice; another bank's, notices.
    inbound = RailFile.objects.filter(institution=bank.institution, direction="inbound")
    notices = RailNotice.objects.filter(institution=bank.institution).count()
    other = interbank_bank(iban_bank_code="002")
    for path in sorted((folder(bank.institution.pk, "sepa", "inbox") / "read").iterdir()):
        again = upload(bank, path.read_bytes(), name="again.xml")
        assert again.json()["fileId"] in {each.pk for each in inbound}
        assert upload(other, path.read_bytes()).status_code == 201
    assert RailNotice.objects.filter(institution=bank.institution).count() == notices
    assert sorted(
        RailNotice.objects.filter(institution=other.institution).values_list("kind", "code")
    ) == [("reject", "AC04"), ("return", "MD06"), ("status", "ACSC"), ("status", "ACSC")]
    assert statuses(bank, made) == ["settled", "rejected", "returned"]
    assert bank.balances() == (0, 0, 0)
    # Between banks a collection needs the debtor bank's BIC.
    body = sepa_external_body(bank.customer_id, german_iban("0000000399"))
    del body["sepa"]["bic"]
    external = created(bank.api.post("/external-accounts", body), "v2")["externalAccountId"]
    mandate = {"externalAccountId": external, "mandateReference": "MDT-4"}
    mandate.update(signatureDate="2026-01-15", scheme="CORE", type="recurrent")
    mandate_id = created(bank.api.post("/mandates", mandate), "v2")["mandateId"]
    error = assert_error(
        bank.order(external, 100, rail="sepa_dd", direction="debit", mandateId=mandate_id),
        "v2",
        400,
        "validation_error",
        ANY,
    )
    assert "BIC" in error["details"]["externalAccountId"]
    assert ledger_breaches() == []


RECALL_REFUSED_NOAS = german_iban("0000000401")
RECALL_CHARGED = german_iban("0000000403")


def settled_interbank(*ibans: str):
    """An interbank bank's orders to `ibans`, in its pacs.008 and settled by the clearing."""
    bank = interbank_bank()
    made, day = sent_orders(bank, *ibans)
    simulated_clearing_run(institution=bank.institution, today=day)
    rails_at(at(day, 16))
    assert set(statuses(bank, made)) == {"settled"}
    return bank, made, day


def recall(bank, made, reason: str = "CUST"):
    return bank.api.post(f"/payment-orders/{made['paymentOrderId']}/recalls", {"reason": reason})


def test_a_recall_goes_to_the_clearing_and_its_pacs004_brings_the_money_back_once(rails_dir):
    bank, (made,), day = settled_interbank(RECALL_CHARGED)
    asked = recall(bank, made, "DUPL")
    assert asked.status_code == 201, asked.json()
    # The payments job writes the camt.056 into the outbox: valid against the official XSD (an
    # independent validator), from the institution by its BIC, naming the pacs.008's ids.
    rails_at(at(day, 17))
    sent = Recall.objects.get(pk=asked.json()["recallId"])
    assert sent.status == "sent"
    content = bytes(sent.file.content)
    outbox = folder(bank.institution.pk, "sepa", "outbox")
    assert (outbox / sent.file.name).read_bytes() == content
    assert xmlschema.XMLSchema(str(CAMT_056.xsd)).is_valid(content)
    request = read_cancellation_request(content)
    assert (request.assignment.assigner_bic, request.assignment.assignee_bic) == (BIC, "DEUTDEFF")
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    (transaction,) = request.transactions
    assert (
        transaction.original_message_id,
        transaction.original_message_type,
        transaction.original_end_to_end_id,
        transaction.original_transaction_id,
        transaction.original_amount,
        transaction.original_settlement_date,
    ) == (
        order.file_id.replace("_", "-"),
        "pacs.008.001.08",
        order.end_to_end_id,
        order.pk[-15:],
        1_000,
        day,
    )

    # The clearing answers with a pacs.004 FOCR, less the beneficiary bank's charges: the
    # order returned, what came back booked to the customer, the recall accepted.
    (answer,) = simulated_clearing_run(institution=bank.institution, today=day)
    assert "pacs004" in answer
    pacs004_content = (folder(bank.institution.pk, "sepa", "inbox") / answer).read_bytes()
    rails_at(at(day, 18))
    returned = bank.api.get(f"/payment-orders/{made['paymentOrderId']}").json()
    assert returned["status"] == "returned"
    assert returned["returnInfo"] == {"code": "FOCR", "reason": "recalled", "late": False}
    assert returned["returnedAmount"] == 1_000 - RECALL_CHARGES
    sent.refresh_from_db()
    assert (sent.status, sent.answer_code) == ("accepted", "")
    kept = LOADED - RECALL_CHARGES
    assert bank.balances() == (kept, 0, kept)

    # The same pacs.004 twice is one file; another bank's return naming an id TX does not
    # know is recorded, and nothing moves.
    again = upload(bank, pacs004_content, name="again.xml")
    assert again.status_code == 201, again.json()
    foreign = pacs004_content.replace(order.end_to_end_id.encode(), b"NOT-OURS-1").replace(
        b"SIMCLR-RTR-", b"OTHERS-RTR-"
    )
    assert upload(bank, foreign, name="foreign.xml").status_code == 201
    notice = RailNotice.objects.get(kind="return", order__isnull=True)
    assert (notice.code, notice.original_trace_number) == ("FOCR", "NOT-OURS-1")
    assert RailFile.objects.filter(institution=bank.institution, direction="inbound").count() == 3
    assert bank.balances() == (kept, 0, kept)
    assert ledger_breaches() == []
    assert recall(bank, made).status_code == 409  # returned: nothing left to recall


def test_a_recall_the_clearing_refuses_keeps_its_reason_and_moves_nothing(rails_dir):
    bank, (made,), day = settled_interbank(RECALL_REFUSED_NOAS)
    assert recall(bank, made, "AC03").status_code == 201
    rails_at(at(day, 17))
    (answer,) = simulated_clearing_run(institution=bank.institution, today=day)
    assert "camt029" in answer
    content = (folder(bank.institution.pk, "sepa", "inbox") / answer).read_bytes()
    rails_at(at(day, 18))
    (listed,) = bank.api.get(f"/payment-orders/{made['paymentOrderId']}/recalls").json()["data"]
    assert (listed["status"], listed["refusal"]) == (
        "rejected",
        {"code": "NOAS", "reason": "no_answer"},
    )
    assert statuses(bank, [made]) == ["settled"]
    assert bank.balances() == (LOADED - 1_000, 0, LOADED - 1_000)
    # The same camt.029 again: one file; another institution's reading it finds no recall of
    # its own (a notice), and the first's recall is untouched.
    assert upload(bank, content, name="again.xml").status_code == 201
    other = interbank_bank(bic="TXOTLULLXXX", iban_bank_code="002")
    assert upload(other, content).status_code == 201
    notice = RailNotice.objects.get(kind="recall", institution=other.institution)
    assert (notice.code, notice.reason, notice.order_id) == ("NOAS", "unknown_recall", None)
    assert RailNotice.objects.filter(kind="recall", institution=bank.institution).count() == 1
    assert Recall.objects.get().status == "rejected"
    assert ledger_breaches() == []
