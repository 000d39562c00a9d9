"""The payments job killed mid-file (docs/payments.md, "Exactly once"; "The connector"): a real
process running the job SIGKILLs itself at a chosen call, its transaction open, and the next
run recovers. Killed in the cut-off after the file's row is written: nothing is left, and the
next run writes the file. Killed between the file's bytes in the outbox and its orders `sent`:
the next run delivers the same bytes under the same name, and the bank reads it once. Killed
while a return file from the bank is applied: nothing of it is, and the next run applies it
once."""

import hashlib
import signal
from datetime import timedelta

import pytest

from accounts.verification import ledger_breaches
from events.models import Event
from payments.models import PaymentOrder, RailFile, RailNotice
from tests.payments.helpers import BERLIN, ach_bank, bank_answers, local, rails_at, sepa_bank
from tests.payments.processes import RailsProcess
from tests.payments.test_concurrency import orders_of
from tests.payments.test_mandates import first_cutoff
from tests.payments.test_orders import business_day, internal

pytestmark = pytest.mark.django_db(transaction=True)
KILLED = -signal.SIGKILL


def killed(rails_dir, instant, die_at: str, after: int = 0, **other) -> None:
    """`other`: RailsProcess's `job=` and `arguments=`, to kill another job the same way."""
    job = RailsProcess(rails_dir, instant, die_at=die_at, after=after, **other)
    try:
        job.go()
        assert job.finish() == KILLED, job.err[-3000:]
    finally:
        job.kill()


def statuses(order_ids) -> list[str]:
    orders = PaymentOrder.objects.in_bulk(order_ids)
    return [orders[order_id].status for order_id in order_ids]


def outbox_of(rails_dir, bank, rail: str = "ach") -> dict[str, str]:
    """The outbox's files (the bank's view: no hidden partial file) by name, their SHA-256."""
    outbox = rails_dir / bank.institution.pk / rail / "outbox"
    files = sorted(outbox.iterdir()) if outbox.exists() else []
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


def test_a_job_killed_in_the_cutoff_after_the_files_row_leaves_nothing(rails_dir):
    """Killed writing the orders' events, the last of the cut-off: the file's row, the three
    orders scheduled, the credit's hold captured and its journal kept were in its open
    transaction. Nothing of them is left; the next run writes the window's file with every
    order."""
    bank = ach_bank(load_amount=10_000)
    order_ids = orders_of(bank, 3)  # a debit of 100, a credit of 200, a debit of 300
    before = bank.balances()
    assert before == (10_000, 200, 9_800)
    instant = local(business_day(), 17)

    killed(rails_dir, instant, "payments.services.cutoff.emit_many")

    assert not RailFile.objects.exists()
    assert statuses(order_ids) == ["approved"] * 3
    assert bank.balances() == before
    assert internal(bank, "rail_clearing") == 0
    assert not Event.objects.filter(type="payment_order.scheduled").exists()
    assert outbox_of(rails_dir, bank) == {}
    assert ledger_breaches() == []

    rails_at(instant)

    [rail_file] = RailFile.objects.filter(direction="outbound")
    assert (rail_file.entry_count, rail_file.status) == (3, "delivered")
    assert outbox_of(rails_dir, bank) == {rail_file.name: rail_file.sha256}
    assert statuses(order_ids) == ["sent"] * 3
    assert bank.balances() == (9_800, 0, 9_800)
    assert internal(bank, "rail_clearing") == 200
    assert ledger_breaches() == []


def test_a_job_killed_after_the_outbox_before_the_orders_are_sent_is_delivered_again(rails_dir):
    """The file is in the outbox and the bank reads it (rejecting one entry at once) before TX
    marked its orders `sent`. The next run writes the same bytes under the same name, marks them
    sent and reads the rejection; the bank has nothing more to answer."""
    bank = ach_bank(load_amount=10_000)
    rejected = bank.ordered(bank.external("3333000019")["externalAccountId"], 1_000)
    order_ids = [*orders_of(bank, 2), rejected["paymentOrderId"]]
    day = business_day()

    killed(rails_dir, local(day, 17), "payments.connector.lock_payment_orders")

    [rail_file] = RailFile.objects.filter(direction="outbound")
    assert (rail_file.status, rail_file.delivered_at) == ("written", None)
    assert outbox_of(rails_dir, bank) == {rail_file.name: rail_file.sha256}
    assert statuses(order_ids) == ["scheduled"] * 3
    assert len(bank_answers(bank, day)) == 1  # R19: the bank read the file

    rails_at(local(day, 18))

    rail_file.refresh_from_db()
    assert rail_file.status == "delivered"
    assert outbox_of(rails_dir, bank) == {rail_file.name: rail_file.sha256}
    assert statuses(order_ids) == ["sent", "sent", "rejected"]
    sent = Event.objects.filter(type="payment_order.sent").values_list("object_id", flat=True)
    assert sorted(sent) == sorted(order_ids)
    assert bank_answers(bank, day + timedelta(days=9)) == []  # read once
    assert bank.balances() == (9_800, 0, 9_800)  # the credit of 200 left, the rejected came back
    assert ledger_breaches() == []


def test_a_job_killed_applying_a_return_file_applies_none_of_it_then_all_once(rails_dir):
    """The bank's file returns two settled credits; killed booking the second: the first's
    return was in the same transaction. The file stays in the inbox, and the next run applies
    it once."""
    bank = ach_bank(load_amount=10_000)
    returned = [
        bank.ordered(bank.external(number)["externalAccountId"], amount)["paymentOrderId"]
        for number, amount in (("1111000001", 1_000), ("1111000003", 2_000))
    ]
    rails_at(local(business_day(), 17))
    effective = PaymentOrder.objects.get(pk=returned[0]).effective_date
    rails_at(local(effective, 9))
    after = effective + timedelta(days=1)
    [name] = bank_answers(bank, after)
    assert bank.balances() == (7_000, 0, 7_000)

    killed(rails_dir, local(after, 10), "payments.services.inbound_files.order_return", after=1)

    assert not RailFile.objects.filter(direction="inbound").exists()
    assert not RailNotice.objects.exists()
    assert statuses(returned) == ["settled", "settled"]
    assert bank.balances() == (7_000, 0, 7_000)
    assert (rails_dir / bank.institution.pk / "ach" / "inbox" / name).exists()

    rails_at(local(after, 11))
    rails_at(local(after, 12))

    [inbound] = RailFile.objects.filter(direction="inbound")
    assert (inbound.status, inbound.entry_count) == ("applied", 2)
    assert RailNotice.objects.count() == 2
    assert statuses(returned) == ["returned", "returned"]
    assert bank.balances() == (10_000, 0, 10_000)
    assert internal(bank, "rail_settlement") == 0
    assert ledger_breaches() == []


def test_a_job_killed_in_a_sepa_cutoff_leaves_nothing_and_the_next_run_writes_the_pain001(
    rails_dir,
):
    """SEPA's cut-off is the same code: killed writing its orders' events, nothing of the
    pain.001 is left (no row, no hold captured, nothing in the outbox); the next run writes
    it with both orders."""
    bank = sepa_bank(load_amount=10_000)
    external = bank.external()["externalAccountId"]
    order_ids = [bank.ordered(external, amount)["paymentOrderId"] for amount in (100, 200)]
    before = bank.balances()
    instant = local(first_cutoff(bank), 15, 1, zone=BERLIN)

    killed(rails_dir, instant, "payments.services.cutoff.emit_many")

    assert not RailFile.objects.exists()
    assert statuses(order_ids) == ["approved"] * 2
    assert bank.balances() == before == (10_000, 300, 9_700)
    assert outbox_of(rails_dir, bank, "sepa") == {}
    assert ledger_breaches() == []

    rails_at(instant)

    [rail_file] = RailFile.objects.filter(direction="outbound")
    assert (rail_file.rail, rail_file.entry_count, rail_file.status) == ("sepa_ct", 2, "delivered")
    assert outbox_of(rails_dir, bank, "sepa") == {rail_file.name: rail_file.sha256}
    assert statuses(order_ids) == ["sent"] * 2
    assert bank.balances() == (9_700, 0, 9_700)
    assert ledger_breaches() == []
