"""NACHA files no one here wrote (tests/payments/files/README.md: their source and licence):
the valid ones parse to the entries their lines hold and re-write byte for byte; the others are
refused whole, naming the record and the field."""

from pathlib import Path

import pytest

from payments.nacha.addenda import PaymentAddenda
from payments.nacha.fields import NachaError
from payments.nacha.file import parse, write_file

FILES = Path(__file__).parent / "files"


def read(name: str) -> bytes:
    return (FILES / name).read_bytes()


def rewritten(data: bytes) -> bytes:
    parsed = parse(data)
    out = write_file(parsed.header, parsed.batches(), line_ending=parsed.line_ending or "\n")
    # These files leave out the last record's line ending.
    return out[: -len(parsed.line_ending)] if not data.endswith(b"\n") else out


@pytest.mark.parametrize(
    "name", ["moov-web-debit.ach", "moov-two-micro-deposits.ach", "moov-ccd-debit.ach"]
)
def test_a_foreign_file_re_writes_byte_for_byte(name):
    data = read(name)
    assert rewritten(data) == data


def test_web_and_ppd_batches():
    parsed = parse(read("moov-web-debit.ach"))
    # The file control as its last record holds it: 3 batches, 2 blocks, 6 entries.
    control = parsed.control
    assert (control.batch_count, control.block_count, control.entry_addenda_count) == (3, 2, 6)
    assert (control.total_debit, control.total_credit) == (15000, 26820)
    entries = [(header.standard_entry_class_code, each.detail) for header, each in parsed.entries()]
    assert [sec for sec, _ in entries] == ["WEB"] * 5 + ["PPD"]
    sec, first = entries[0]
    assert (first.transaction_code, first.routing_number, first.amount) == (22, "081000210", 3521)
    assert first.dfi_account_number == "12345678901234567"
    # Read as written: mixed case, and the payment type code right-justified.
    assert first.receiver_name == "John Doe"
    assert first.payment_type_code == " S"
    assert entries[-1][1].discretionary_data == "A1"


def test_savings_entries_with_addenda():
    parsed = parse(read("moov-two-micro-deposits.ach"))
    entries = [each for _, each in parsed.entries()]
    assert [each.detail.transaction_code for each in entries] == [32, 32, 27, 32, 32, 27]
    assert [each.detail.amount for each in entries] == [44, 32, 76, 2, 42, 44]
    addenda = entries[0].addenda[0]
    assert isinstance(addenda, PaymentAddenda)
    assert addenda.payment_related_information == "paygate transaction"
    assert addenda.entry_detail_sequence_number == entries[0].detail.trace_number[-7:]


def test_a_ccd_debits_only_batch():
    parsed = parse(read("moov-ccd-debit.ach"))
    batch = next(parsed.batches())
    assert (batch.header.standard_entry_class_code, batch.header.service_class_code) == ("CCD", 225)
    assert [each.detail.amount for each in batch.entries] == [500000, 125]
    assert batch.control.total_debit == 500125
    assert batch.entries[0].detail.receiver_name == "Best Co. #123456789012"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "moov-return-web.ach",
            "record 5 (batch control), company identification (positions 45-54): is "
            "' 123456789', but the batch header has '123456789'",
        ),
        (
            "moov-cor-read.ach",
            "record 4 (addenda 98 (notification of change)), trace number (positions 80-94): is "
            "091012980000088, but entry record 3's trace number is 121042880000001",
        ),
        (
            "moov-dishonored-return.ach",
            "record 2 (batch header), standard entry class code (positions 51-53): 'POS' is not "
            "one of CCD, COR, PPD, WEB",
        ),
        (
            "moov-fiserv-zerofile.ach",
            "record 1 (file header): is 69 characters long; a record has 94",
        ),
    ],
)
def test_a_foreign_file_refused(name, message):
    with pytest.raises(NachaError) as refused:
        parse(read(name))
    assert str(refused.value) == message
