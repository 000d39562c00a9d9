"""Inbound ACH (issue 49 item 4; docs/payments.md, "Inbound entries"): other banks' credits and
debits to the institution's accounts, sent by the simulated bank, applied on their settlement
date or returned in TX's next file with their reason; a credit for no account in suspense until
staff apply or return it. The ledger is checked at every step."""

from datetime import timedelta

import pytest

from accounts.models import Account, StatementLine
from accounts.verification import ledger_breaches
from events.models import Event
from payments.models import InboundEntry, RailFile
from payments.nacha.addenda import ReturnAddenda
from payments.nacha.file import parse
from payments.services.inbound import inbound_entry_apply, inbound_entry_return
from sandbox.simulated_bank import Incoming, simulated_bank_send
from tests.accounts.api.helpers import created
from tests.payments.helpers import ach_bank, inbound_credit_file, local, rails_at, upload_body
from tests.payments.test_orders import business_day, internal

pytestmark = pytest.mark.django_db


def number_of(bank) -> str:
    return Account.objects.get(pk=bank.account_id).account_number


def send(bank, day, *entries: Incoming) -> None:
    simulated_bank_send(institution=bank.institution, entries=list(entries), settles_on=day)


def returned_in_next_file(bank) -> dict[str, str]:
    """{original trace number: return code} of the returns in TX's last outbound file."""
    rail_file = RailFile.objects.filter(direction="outbound").latest("created_at")
    parsed = parse(bytes(rail_file.content))
    return {
        entry.addenda[0].original_entry_trace_number: entry.addenda[0].return_reason_code
        for _, entry in parsed.entries()
        if isinstance(entry.addenda[0] if entry.addenda else None, ReturnAddenda)
    }


def test_a_payroll_credit_is_applied_on_its_settlement_date_and_the_same_entry_again_once(
    rails_dir,
):
    bank = ach_bank(load_amount=0)
    day = business_day()
    send(bank, day, Incoming("credit", number_of(bank), 250_000, receiver_name="Ada Lovelace"))

    rails_at(local(day - timedelta(days=1), 12))  # read, not yet settled
    [entry] = InboundEntry.objects.all()
    assert (entry.status, entry.account_id, entry.account_number_last4) == (
        "received",
        bank.account_id,
        number_of(bank)[-4:],
    )
    assert bank.balances() == (0, 0, 0)

    rails_at(local(day, 9))
    entry.refresh_from_db()
    assert entry.status == "applied"
    assert bank.balances() == (250_000, 0, 250_000)
    line = StatementLine.objects.get(account_id=bank.account_id)
    assert (line.type, line.amount) == ("CashInc", 250_000)
    assert internal(bank, "rail_settlement") == -250_000
    [applied] = Event.objects.filter(type="inbound_entry.applied")
    assert number_of(bank) not in str(applied.data)

    # The bank sends the same entry again, in another file (its file id modifier B, not A):
    # recorded once, applied once.
    first = bytes(RailFile.objects.get(direction="inbound").content)
    assert first[33:34] == b"A"
    again = first[:33] + b"B" + first[34:]
    inbox = rails_dir / bank.institution.pk / "ach" / "inbox"
    (inbox / "again.ach").write_bytes(again)
    rails_at(local(day, 10))
    assert RailFile.objects.filter(direction="inbound", status="applied").count() == 2
    assert InboundEntry.objects.count() == 1
    assert bank.balances() == (250_000, 0, 250_000)
    assert ledger_breaches() == []


def test_debits_the_account_cannot_take_are_returned_in_the_next_file_with_their_reason(
    rails_dir,
):
    bank = ach_bank(load_amount=10_000)
    frozen, closed = ach_bank(load_amount=0), ach_bank(load_amount=0)
    day = business_day()
    number = number_of(bank)
    send(
        bank,
        day,
        Incoming("debit", number, 4_000, company_name="City Power"),  # applied
        Incoming("debit", number, 6_001, company_name="City Power"),  # 6,000 left: R01
        Incoming("debit", "999999999999", 100, company_name="City Power"),  # R03
    )
    rails_at(local(day, 9))

    assert bank.balances() == (6_000, 0, 6_000)
    by_amount = {e.amount: e for e in InboundEntry.objects.all()}
    assert by_amount[4_000].status == "applied"
    assert (by_amount[6_001].status, by_amount[6_001].return_code) == ("returning", "R01")
    assert (by_amount[100].status, by_amount[100].return_code) == ("returning", "R03")
    assert internal(bank, "rail_settlement") == 4_000

    rails_at(local(day, 17))  # the 16:45 file carries the returns
    returns = returned_in_next_file(bank)
    assert returns == {
        by_amount[6_001].trace_number: "R01",
        by_amount[100].trace_number: "R03",
    }
    for entry in InboundEntry.objects.filter(amount__in=[6_001, 100]):
        assert entry.status == "returned"
        assert entry.return_trace_number.startswith(bank.profile.receiving_routing_number[:8])
    assert ledger_breaches() == []

    # Frozen and closed accounts take nothing, either way.
    frozen.api.patch(f"/accounts/{frozen.account_id}", {"status": "frozen"})
    closed.api.patch(f"/accounts/{closed.account_id}", {"status": "closed"})
    for other in (frozen, closed):
        send(other, day, Incoming("credit", number_of(other), 500))
    rails_at(local(day + timedelta(days=1), 9))
    for other, code in ((frozen, "R16"), (closed, "R02")):
        entry = InboundEntry.objects.get(institution=other.institution)
        assert (entry.status, entry.return_code) == ("returning", code)
        assert other.balances() == (0, 0, 0)
    assert ledger_breaches() == []


def test_a_credit_for_no_account_waits_in_suspense_until_staff_apply_or_return_it(rails_dir):
    bank = ach_bank(load_amount=0)
    day = business_day()
    send(
        bank,
        day,
        Incoming("credit", "000000000001", 700),
        Incoming("credit", "000000000002", 300),
    )
    rails_at(local(day, 9))
    first, second = InboundEntry.objects.order_by("amount").reverse()
    assert (first.status, second.status) == ("suspense", "suspense")
    assert internal(bank, "rail_suspense") == 1_000
    assert ledger_breaches() == []

    inbound_entry_apply(inbound=first, account=Account.objects.get(pk=bank.account_id))
    inbound_entry_return(inbound=second, code="R03")
    assert bank.balances() == (700, 0, 700)
    assert internal(bank, "rail_suspense") == 0
    assert InboundEntry.objects.get(pk=second.pk).status == "returning"
    assert ledger_breaches() == []

    rails_at(local(day, 17))
    assert returned_in_next_file(bank) == {second.trace_number: "R03"}
    assert ledger_breaches() == []


def test_the_api_shows_inbound_entries_by_their_last_four_to_their_institution_only(rails_dir):
    bank, other = ach_bank(load_amount=0), ach_bank(load_amount=0)
    day = business_day()
    content = inbound_credit_file(bank.profile, number_of(bank), 1_234, day)
    created(bank.api.post("/rail-files", upload_body(content, "payroll.ach")), "v2")
    [listed] = bank.api.get("/inbound-entries", {"accountId": bank.account_id}).json()["data"]
    assert {
        key: listed[key]
        for key in ("accountId", "accountNumberLast4", "direction", "amount", "status")
    } == {
        "accountId": bank.account_id,
        "accountNumberLast4": number_of(bank)[-4:],
        "direction": "credit",
        "amount": 1_234,
        "status": "received",
    }
    shown = bank.api.get(f"/inbound-entries/{listed['inboundEntryId']}")
    assert number_of(bank) not in shown.content.decode()
    assert other.api.get(f"/inbound-entries/{listed['inboundEntryId']}").status_code == 404
    assert other.api.get("/inbound-entries").json()["data"] == []
