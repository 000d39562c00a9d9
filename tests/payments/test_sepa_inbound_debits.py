"""Inbound SEPA direct debits of an interbank profile (issue 50 item 5): the clearing presents
pacs.003 collections from the institution's accounts at their IBANs, checked when read against
the mandates the customer holds and the creditors it blocks (its register, under the account in
v2): rejected before settlement with TX's pacs.002 (AC01, AC04, AC06, SL01, MD01), or kept for
their settlement date, when the payments job debits them once, or returns them in TX's pacs.004
(AM04, AC06: the debtor bank's return after settlement, nothing moved); the same file twice
once, another institution's account 404."""

import base64

import pytest
import xmlschema
from django.core.management import call_command

from accounts.models import Account
from accounts.verification import ledger_breaches
from cards.dates import today_of
from events.models import Event
from payments.account_ibans import _iban, account_iban
from payments.iso20022 import pacs002, pacs003, pacs004
from payments.iso20022.messages import PACS_002, PACS_004
from payments.models import InboundEntry, RailFile
from sandbox.simulated_clearing import send_collection, simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import eur_account, rails_at, sepa_bank
from tests.payments.test_sepa_interbank import BIC, LOADED, at, interbank_bank, next_sepa_day

pytestmark = pytest.mark.django_db

CREDITOR = "DE98ZZZ09999999999"
# The same creditor under another business code (positions 5 to 7): the same creditor.
CREDITOR_OTHER_CODE = "DE98ABC09999999999"
BLOCKED = "IT66ZZZA1B2C3D4E5F6G7H8"


def upload(bank, content: bytes):
    body = {
        "rail": "sepa_ct",
        "name": "dd.xml",
        "contentBase64": base64.b64encode(content).decode(),
    }
    return bank.api.post("/rail-files", body)


def register(bank, path: str, body: dict, account_id: str | None = None):
    return bank.api.post(f"/accounts/{account_id or bank.account_id}/{path}", body)


def test_collections_wait_for_their_date_then_are_debited_or_returned_in_txs_pacs004(rails_dir):
    bank = interbank_bank()
    mandate = created(
        register(
            bank,
            "debtor-mandates",
            {"creditorIdentifier": CREDITOR, "mandateReference": "MDT-1"},
        ),
        "v2",
    )
    assert (mandate["status"], mandate["creditorIdentifier"]) == ("active", CREDITOR)
    blocked = created(register(bank, "blocked-creditors", {"creditorIdentifier": BLOCKED}), "v2")
    created(
        register(bank, "debtor-mandates", {"creditorIdentifier": BLOCKED, "mandateReference": "B"}),
        "v2",
    )
    assert_error(
        register(bank, "blocked-creditors", {"creditorIdentifier": BLOCKED}),
        "v2",
        422,
        "duplicate_reference",
        ANY,
    )
    event = Event.objects.get(object_id=mandate["debtorMandateId"])
    assert (event.actor_type, event.data["creditor_identifier"]) == ("apiKey", CREDITOR)
    account = Account.objects.get(pk=bank.account_id)
    iban = account_iban(account, bank.profile)
    frozen, closed = (eur_account(bank.api, bank.customer_id, 0) for _ in range(2))
    Account.objects.filter(pk=frozen).update(status="frozen")
    Account.objects.filter(pk=closed).update(status="closed")
    ibans = {pk: account_iban(Account.objects.get(pk=pk), bank.profile) for pk in (frozen, closed)}
    unknown = _iban("LU", "001", "999999999999")
    day = today_of(bank.institution)
    due = next_sepa_day(bank, day)  # presented days before its settlement date
    sent = [
        (iban, 1_000, CREDITOR_OTHER_CODE, "MDT-1"),  # debited on its date
        (iban, 2_000, CREDITOR, "MDT-2"),  # MD01: no such mandate
        (iban, 3_000, BLOCKED, "B"),  # SL01: blocked, mandate or not
        (iban, LOADED, CREDITOR, "MDT-1"),  # AM04 on its date: more than is left then
        (unknown, 100, CREDITOR, "MDT-1"),  # AC01
        (ibans[closed], 100, CREDITOR, "MDT-1"),  # AC04
        (ibans[frozen], 100, CREDITOR, "MDT-1"),  # AC06
    ]
    for debtor_iban, amount, creditor, reference in sent:
        send_collection(
            iban=debtor_iban,
            amount=amount,
            creditor_id=creditor,
            mandate_reference=reference,
            today=due,
        )
    rails_at(at(day, 10))

    def entries():
        return list(
            InboundEntry.objects.filter(institution=bank.institution, rail="sepa_dd").order_by(
                "sepa_reference"
            )
        )

    # Read: rejected at once what does not depend on the day; the rest waits, nothing moves.
    assert [(e.status, e.return_code, e.amount) for e in entries()] == [
        ("received", "", 1_000),
        ("rejected", "MD01", 2_000),
        ("rejected", "SL01", 3_000),
        ("received", "", LOADED),
        ("rejected", "AC01", 100),
        ("rejected", "AC04", 100),
        ("rejected", "AC06", 100),
    ]
    assert bank.balances() == (LOADED, 0, LOADED)
    # TX's rejections: a pacs.002 per file with one, valid against the official XSD.
    answers = RailFile.objects.filter(
        institution=bank.institution, direction="outbound", rail="sepa_dd"
    ).order_by("pk")
    assert len(answers) == 5
    schema = xmlschema.XMLSchema(str(PACS_002.xsd))
    codes = []
    for answer in answers:
        content = bytes(answer.content)
        assert schema.is_valid(content)
        (status,) = pacs002.read_status_report(content).transactions
        codes.append((status.status, status.reasons[0].code))
    assert sorted(codes) == sorted(("RJCT", e.return_code) for e in entries() if e.return_code)

    # On its date the job debits what the account covers, once (run twice), and returns the
    # rest in TX's pacs.004 (AM04), the account untouched.
    rails_at(at(due, 10))
    rails_at(at(due, 10, 5))
    entries_now = entries()
    assert [(e.status, e.return_code) for e in entries_now[:4:3]] == [
        ("applied", ""),
        ("returned", "AM04"),
    ]
    assert bank.balances() == (LOADED - 1_000, 0, LOADED - 1_000)
    shown = bank.api.get(f"/inbound-entries/{entries_now[0].pk}").json()
    assert (shown["direction"], shown["status"], shown["rail"]) == ("debit", "applied", "sepa_dd")
    assert iban not in str(shown)
    short = entries_now[3]
    returned = bytes(short.return_file.content)
    assert xmlschema.XMLSchema(str(PACS_004.xsd)).is_valid(returned)
    (back,) = pacs004.read_return(returned).transactions
    assert (back.return_id, back.reason.code, back.reason.originator_bic, back.returned_amount) == (
        short.return_trace_number,
        "AM04",
        BIC,
        LOADED,
    )
    assert back.original_transaction_id == short.sepa_reference
    event = Event.objects.get(object_id=short.pk, type="inbound_entry.returned")
    assert event.data["return_code"] == "AM04"
    assert ledger_breaches() == []
    # The rejections and the return delivered into the sepa outbox; the clearing takes them.
    outbox = rails_dir / bank.institution.pk / "sepa" / "outbox"
    assert len(list(outbox.iterdir())) == 6
    assert simulated_clearing_run(institution=bank.institution, today=due) == []

    # The same file again: the same file; the same collection in another message (the same
    # creditor bank and transaction id): another file, nothing moves, nothing answered twice.
    first = RailFile.objects.get(pk=entries_now[0].file_id)
    again = upload(bank, bytes(first.content))
    assert again.json()["fileId"] == first.pk
    rejected = bytes(RailFile.objects.get(pk=entries_now[1].file_id).content)
    message_id = pacs003.read_debits(rejected).header.message_id.encode()
    resent = upload(bank, rejected.replace(message_id, b"SIMCLR-MSG-AGAIN"))
    assert resent.status_code == 201 and resent.json()["fileId"] != entries_now[1].file_id
    assert InboundEntry.objects.filter(rail="sepa_dd").count() == 7
    assert RailFile.objects.filter(direction="outbound", rail="sepa_dd").count() == 6

    # Cancelled, the mandate pays nothing more; unblocked, the creditor is paid under its mandate.
    bank.api.post(
        f"/accounts/{bank.account_id}/debtor-mandates/{mandate['debtorMandateId']}/cancellations",
        {},
    )
    path = f"/accounts/{bank.account_id}/blocked-creditors/{blocked['blockedCreditorId']}"
    created(bank.api.post(f"{path}/cancellations", {"reason": "Agreed"}), "v2")
    assert_error(
        bank.api.post(f"{path}/cancellations", {}), "v2", 409, "invalid_state_transition", ANY
    )
    send_collection(
        iban=iban, amount=500, creditor_id=CREDITOR, mandate_reference="MDT-1", today=due
    )
    # The sandbox's command presents one the same way (due today: the job, days later, catches
    # up and debits it in the run that reads it).
    call_command("simulated_bank", "--send-direct-debit", iban, "500", BLOCKED, "B")
    rails_at(at(due, 11))
    latest = InboundEntry.objects.filter(rail="sepa_dd").order_by("-pk")[:2]
    assert sorted((e.return_code, e.status) for e in latest) == [
        ("", "applied"),
        ("MD01", "rejected"),
    ]
    assert bank.balances()[0] == LOADED - 1_500
    # A mandate whose reference the creditor amended: paid under the reference the customer
    # registered, which the collection names as the original.
    send_collection(
        iban=iban,
        amount=200,
        creditor_id=BLOCKED,
        mandate_reference="B-2",
        today=due,
        original_mandate_reference="B",
    )
    rails_at(at(due, 12))
    assert bank.balances()[0] == LOADED - 1_700
    listed = bank.api.get(f"/accounts/{bank.account_id}/debtor-mandates?status=active").json()
    assert [each["mandateReference"] for each in listed["data"]] == ["B"]

    # Active when read, frozen by its date: returned AC06 in a pacs.004, nothing moves.
    later = next_sepa_day(bank, due)
    send_collection(iban=iban, amount=300, creditor_id=BLOCKED, mandate_reference="B", today=later)
    rails_at(at(due, 13))
    waiting = InboundEntry.objects.get(rail="sepa_dd", settlement_date=later)
    assert waiting.status == "received"
    Account.objects.filter(pk=bank.account_id).update(status="frozen")
    rails_at(at(later, 10))
    waiting.refresh_from_db()
    assert (waiting.status, waiting.return_code, waiting.return_reason) == (
        "returned",
        "AC06",
        "account_frozen",
    )
    (back,) = pacs004.read_return(bytes(waiting.return_file.content)).transactions
    assert back.reason.code == "AC06"
    assert bank.balances()[0] == LOADED - 1_700
    assert ledger_breaches() == []


def test_another_institutions_account_and_an_institution_not_in_the_clearing(rails_dir):
    bank = interbank_bank()
    mandate = created(
        register(
            bank, "debtor-mandates", {"creditorIdentifier": CREDITOR, "mandateReference": "M"}
        ),
        "v2",
    )
    other = sepa_bank()
    body = {"creditorIdentifier": CREDITOR, "mandateReference": "M"}
    for response in (
        register(other, "debtor-mandates", body, account_id=bank.account_id),
        register(other, "blocked-creditors", {"creditorIdentifier": CREDITOR}, bank.account_id),
        other.api.get(f"/accounts/{bank.account_id}/debtor-mandates"),
        other.api.post(
            f"/accounts/{other.account_id}/debtor-mandates/{mandate['debtorMandateId']}"
            "/cancellations",
            {},
        ),
    ):
        assert_error(response, "v2", 404, "not_found", ANY)
    assert_error(
        register(
            bank, "debtor-mandates", {"creditorIdentifier": "DE00ZZZ1", "mandateReference": "M"}
        ),
        "v2",
        400,
        "validation_error",
        ANY,
    )
    # A pacs.003 to an institution that is not in the clearing is refused whole.
    _, name = send_collection(
        iban=account_iban(Account.objects.get(pk=bank.account_id), bank.profile),
        amount=100,
        creditor_id=CREDITOR,
        mandate_reference="M",
    )
    content = (rails_dir / bank.institution.pk / "sepa" / "inbox" / name).read_bytes()
    response = upload(other, content)
    assert response.status_code == 400
    assert "not interbank" in response.json()["details"]["contentBase64"]
    assert not InboundEntry.objects.exists()
