"""Whole NACHA files: what the writer computes, round trips of every kind of file TX writes or
reads (outbound payments, returns with dishonored and contested returns, notifications of
change), and the parser refusing a malformed file whole, naming the record and the field."""

import datetime
import io
import tracemalloc

import pytest

from payments.nacha.addenda import (
    ContestedReturnAddenda,
    DishonoredReturnAddenda,
    NotificationOfChange,
    ReturnAddenda,
)
from payments.nacha.fields import NachaError
from payments.nacha.file import Batch, Entry, numbered, parse, trace_number, write_file
from tests.payments.nacha_helpers import (
    ODFI,
    RDFI_A,
    RDFI_B,
    RDFI_C,
    batch_header,
    entry,
    file_header,
    outbound_batches,
    outbound_file,
)


def lines_of(data: bytes) -> list[str]:
    return data.decode("ascii").split("\n")[:-1]


def file_of(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("ascii")


def patched(data: bytes, record: int, start: int, end: int, text: str) -> bytes:
    """The file with positions start-end of record `record` (both from 1) replaced."""
    lines = lines_of(data)
    line = lines[record - 1]
    assert len(text) == end - start + 1
    lines[record - 1] = line[: start - 1] + text + line[end:]
    return file_of(lines)


def refused(data, record_number, message):
    with pytest.raises(NachaError) as caught:
        parse(data)
    assert caught.value.record_number == record_number
    assert str(caught.value).startswith(f"record {record_number} "), str(caught.value)
    assert message in str(caught.value), str(caught.value)
    return caught.value


# --- the writer --------------------------------------------------------------------------------


def test_the_writer_numbers_and_computes_the_controls():
    data = outbound_file()
    lines = lines_of(data)
    # 1 header, 3 batches (header + entries + addenda + control), 1 control: 19 records, one
    # padding record fills the second block.
    assert "".join(line[0] for line in lines) == "15667668567685668999"
    assert lines[-1] == "9" * 94 and len(lines) == 20
    assert all(len(line) == 94 for line in lines)
    # Batch numbers ascend from 1; trace numbers are the ODFI's 8 digits and a sequence running
    # through the file from the first given (41).
    assert [line[87:94] for line in lines if line[0] == "5"] == ["0000001", "0000002", "0000003"]
    assert [line[79:94] for line in lines if line[0] == "6"] == [
        f"{ODFI}{sequence:07d}" for sequence in range(41, 49)
    ]
    # Addenda indicators, and the 05 addenda pointing to their entry.
    assert "".join(line[78] for line in lines if line[0] == "6") == "01001000"
    assert [(line[83:87], line[87:94]) for line in lines if line[0] == "7"] == [
        ("0001", "0000042"),
        ("0001", "0000045"),
    ]
    # Batch 1 (PPD, mixed): entries + addenda 5; hash 02100002 + 12100024 + 02600959 +
    # 02100002 = 18900987; debits 75.10 (the prenotes carry nothing), credits 1,250.00.
    assert lines[7] == (
        "820000000500189009870000000075100000001250001234567890" + " " * 25 + "091000010000001"
    )
    # Batch 2 (CCD, credits only): 12100024 + 02600959; credits 9,900.00 + 0.01.
    assert lines[12][:44] == "82200000030014700983000000000000000000990001"
    # Batch 3 (WEB, debits only): 02100002 + 12100024; debits 49.99 + 15.00.
    assert lines[16][:44] == "82250000020014200026000000006499000000000000"
    # The file: 3 batches, 2 blocks, 10 entries and addenda, the hashes added up (18900987 +
    # 14700983 + 14200026 = 47801996), the totals too.
    assert lines[17] == ("9000003000002000000100047801996000000014009000001115001" + " " * 39)


def test_the_entry_hash_keeps_its_last_10_digits():
    # 1,300 entries to RDFI 99999999 overflow 10 digits: 1300 * 99999999 = 129,999,998,700.
    routing = "999999992"
    batch = Batch(
        batch_header("PPD", 220),
        tuple(Entry(entry(22, routing, 1)) for _ in range(1300)),
    )
    data = write_file(file_header(), numbered([batch]))
    control = parse(data).control
    assert control.entry_hash == 9999998700
    assert control.total_credit == 1300


def test_the_writer_refuses_what_the_parser_would():
    # Entries out of trace order: the writer checks every record it makes with the parser's rules.
    batches = outbound_batches()
    first = batches[0]
    swapped = Batch(first.header, (first.entries[1], first.entries[0], *first.entries[2:]))
    with pytest.raises(
        NachaError,
        match=r"record 5 \(entry detail\), trace number .* trace "
        r"numbers ascend within a batch",
    ):
        write_file(file_header(), [swapped, *batches[1:]])


def test_the_writer_refuses_a_debit_in_a_credits_only_batch():
    batch = Batch(batch_header("CCD", 220), (Entry(entry(27, RDFI_A, 100)),))
    with pytest.raises(
        NachaError,
        match=r"record 3 \(entry detail\), transaction code "
        r"\(positions 2-3\): 27 is a debit in a credits-only batch",
    ):
        write_file(file_header(), numbered([batch]))


def test_a_given_batch_control_must_be_the_computed_one():
    parsed = list(parse(outbound_file()).batches())
    stale = Batch(parsed[0].header, parsed[0].entries[:-1], parsed[0].control)
    with pytest.raises(NachaError, match="is not the computed"):
        write_file(file_header(), [stale])


def test_trace_numbers():
    assert trace_number("09100001", 1) == "091000010000001"
    assert trace_number("09100001", 9_999_999) == "091000019999999"
    with pytest.raises(ValueError, match="outside 1-9999999"):
        trace_number("09100001", 10_000_000)
    with pytest.raises(ValueError, match="not an 8-digit ODFI"):
        trace_number("091000019", 1)


# --- round trips -------------------------------------------------------------------------------


def test_a_file_tx_writes_re_parses_to_the_same_entries():
    batches = outbound_batches()
    data = write_file(file_header(), batches)
    parsed = parse(data)
    assert parsed.header == file_header()
    again = list(parsed.batches())
    assert [batch.header for batch in again] == [batch.header for batch in batches]
    assert [batch.entries for batch in again] == [batch.entries for batch in batches]
    assert [entry for _, entry in parsed.entries()] == [
        each for batch in batches for each in batch.entries
    ]
    # And the parsed batches (controls included) write the same bytes.
    assert write_file(parsed.header, again) == data


def test_what_tx_writes_is_uppercase():
    data = outbound_file()
    assert data == data.upper()
    assert b"JANE ROE" in data and b"TX DEMO BANK" in data


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_line_endings_lf_and_crlf(ending):
    data = outbound_file(line_ending=ending)
    assert data.count(ending.encode()) == 20
    parsed = parse(data)
    assert parsed.line_ending == ending
    assert write_file(parsed.header, parsed.batches(), line_ending=ending) == data
    # The last record's ending may be left out.
    assert parse(data[: -len(ending)]).record_count == 20


def test_records_back_to_back_with_no_line_ending():
    data = outbound_file().replace(b"\n", b"")
    assert len(data) == 20 * 94
    parsed = parse(data)
    assert parsed.line_ending == ""
    assert sum(1 for _ in parsed.entries()) == 8


def return_file() -> bytes:
    """What an RDFI (or the simulated bank) sends back: returns coded 21/26 with addenda 99, a
    dishonored return and a contested dishonored return."""
    rdfi = "02100002"
    original = f"{ODFI}0000042"
    returns = numbered(
        [
            Batch(
                batch_header(
                    "PPD", 200, odfi_identification=rdfi, company_entry_description="PAYROLL"
                ),
                (
                    Entry(
                        entry(26, "091000019", 7510, "John Doe", trace_number=f"{rdfi}0000000"),
                        (
                            ReturnAddenda(
                                return_reason_code="R01",
                                original_entry_trace_number=original,
                                original_rdfi_identification=RDFI_B[:8],
                                trace_number=f"{rdfi}0000000",
                            ),
                        ),
                    ),
                    Entry(
                        entry(21, "091000019", 125000, "Jane Roe", trace_number=f"{rdfi}0000000"),
                        (
                            ReturnAddenda(
                                return_reason_code="R15",
                                original_entry_trace_number=f"{ODFI}0000041",
                                date_of_death=datetime.date(2026, 2, 27),
                                original_rdfi_identification=RDFI_A[:8],
                                trace_number=f"{rdfi}0000000",
                            ),
                        ),
                    ),
                    Entry(
                        entry(21, "091000019", 500, "Dishonored", trace_number=f"{rdfi}0000000"),
                        (
                            DishonoredReturnAddenda(
                                dishonored_return_reason_code="R69",
                                original_entry_trace_number=f"{ODFI}0000043",
                                original_rdfi_identification=RDFI_C[:8],
                                return_trace_number=f"{rdfi}0000007",
                                return_settlement_date=65,
                                return_reason_code="01",
                                addenda_information="01*03",
                                trace_number=f"{rdfi}0000000",
                            ),
                        ),
                    ),
                    Entry(
                        entry(26, "091000019", 500, "Contested", trace_number=f"{rdfi}0000000"),
                        (
                            ContestedReturnAddenda(
                                contested_return_reason_code="R73",
                                original_entry_trace_number=f"{ODFI}0000043",
                                date_original_entry_returned=datetime.date(2026, 3, 3),
                                original_rdfi_identification=RDFI_C[:8],
                                original_settlement_date=64,
                                return_trace_number=f"{rdfi}0000007",
                                return_settlement_date=65,
                                return_reason_code="01",
                                dishonored_return_trace_number=f"{ODFI}0000099",
                                dishonored_return_settlement_date=68,
                                dishonored_return_reason_code="69",
                                trace_number=f"{rdfi}0000000",
                            ),
                        ),
                    ),
                ),
            )
        ]
    )
    return write_file(file_header(immediate_destination="021000021"), returns)


def test_a_return_file_round_trips():
    data = return_file()
    parsed = parse(data)
    entries = [entry for _, entry in parsed.entries()]
    kinds = [type(each.addenda[0]) for each in entries]
    assert kinds == [ReturnAddenda, ReturnAddenda, DishonoredReturnAddenda, ContestedReturnAddenda]
    reasons = [(each.addenda[0].reason.code, each.addenda[0].reason.normalized) for each in entries]
    assert reasons == [
        ("R01", "insufficient_funds"),
        ("R15", "account_holder_deceased"),
        ("R69", "return_field_errors"),
        ("R73", "timely_original_return"),
    ]
    # Each 99 carries its return entry's trace number; the original trace points to TX's entry.
    assert all(each.addenda[0].trace_number == each.detail.trace_number for each in entries)
    assert entries[0].addenda[0].original_entry_trace_number == f"{ODFI}0000042"
    assert entries[1].addenda[0].death_date == datetime.date(2026, 2, 27)
    # A return of a debit (26) counts as a debit, of a credit (21) as a credit.
    assert (parsed.control.total_debit, parsed.control.total_credit) == (8010, 125500)
    assert write_file(parsed.header, parsed.batches()) == data


def noc_file() -> bytes:
    rdfi = "02100002"
    corrections = [
        ("C01", "1918171614"),
        ("C03", "026009593   1918171614"),
        ("C05", "32"),
        # Account number in 1-17, blanks, the transaction code in 21-22.
        ("C06", "1918171614".ljust(20) + "37"),
        # Routing number in 1-9, account number in 10-26, the transaction code in 27-28.
        ("C07", "121000248" + "1918171614".ljust(17) + "37"),
    ]
    batch = Batch(
        batch_header("COR", 200, odfi_identification=rdfi),
        tuple(
            Entry(
                entry(
                    26 if code != "C05" else 21,
                    "091000019",
                    0,
                    "Noc",
                    trace_number=f"{rdfi}0000000",
                ),
                (
                    NotificationOfChange(
                        change_code=code,
                        original_entry_trace_number=f"{ODFI}00000{index + 41}",
                        original_rdfi_identification=RDFI_A[:8],
                        corrected_data=data,
                        trace_number=f"{rdfi}0000000",
                    ),
                ),
            )
            for index, (code, data) in enumerate(corrections)
        ),
    )
    return write_file(file_header(immediate_destination="021000021"), numbered([batch]))


def test_a_notification_of_change_file_round_trips():
    data = noc_file()
    parsed = parse(data)
    notices = [each.addenda[0] for _, each in parsed.entries()]
    assert [notice.change_code for notice in notices] == ["C01", "C03", "C05", "C06", "C07"]
    found = [notice.correction() for notice in notices]
    assert found[0].account_number == "1918171614" and found[0].routing_number is None
    assert (found[1].routing_number, found[1].account_number) == ("026009593", "1918171614")
    assert found[2].transaction_code == 32
    assert (found[3].account_number, found[3].transaction_code) == ("1918171614", 37)
    assert (found[4].routing_number, found[4].account_number, found[4].transaction_code) == (
        "121000248",
        "1918171614",
        37,
    )
    assert write_file(parsed.header, parsed.batches()) == data


def test_a_file_of_no_batches():
    data = write_file(file_header(), [])
    assert len(lines_of(data)) == 10
    parsed = parse(data)
    assert parsed.control.batch_count == 0 and list(parsed.batches()) == []


# --- refusals: the whole file, naming the record and the field ---------------------------------


def test_a_wrong_length():
    lines = lines_of(outbound_file())
    lines[2] = lines[2][:93]
    refused(file_of(lines), 3, "(entry detail): is 93 characters long; a record has 94")
    lines = lines_of(outbound_file())
    lines[2] = lines[2] + " "
    refused(file_of(lines), 3, "(entry detail): is longer than 94 characters")


def test_an_unknown_record_type():
    error = refused(
        patched(outbound_file(), 4, 1, 1, "4"),
        4,
        "(record), record type code (position 1): '4' is not a record type (1, 5, 6, 7, 8, 9)",
    )
    assert error.positions == (1, 1)


def test_records_out_of_order():
    lines = lines_of(outbound_file())
    # An entry before any batch header.
    refused(
        file_of([lines[0], lines[2], *lines[1:2], *lines[3:]]),
        2,
        "(entry detail), record type code (position 1): is out of order: a batch header or "
        "file control is expected after the file header",
    )
    # A batch header where its control should be.
    refused(
        file_of([*lines[:7], lines[8], *lines[7:]]),
        8,
        "(batch header), record type code (position 1): is out of order",
    )
    # No file header.
    refused(file_of(lines[1:]), 1, "is out of order: a file header is expected to start the file")


def test_a_batch_without_entries():
    header = batch_header("PPD", 200).to_line()
    control = "8200" + "0" * 40 + "1234567890" + " " * 25 + ODFI + "0000001"
    lines = [file_header().to_line(), header, control]
    refused(
        file_of(lines),
        3,
        "(batch control), record type code (position 1): is out of order: "
        "an entry detail is expected after the batch header",
    )


@pytest.mark.parametrize(
    ("record", "start", "end", "text", "message"),
    [
        # Batch 1's control: count, hash, debit total, credit total, each off by one.
        (
            8,
            5,
            10,
            "000006",
            "(batch control), entry/addenda count (positions 5-10): is 6, but the batch has 5",
        ),
        (
            8,
            11,
            20,
            "0018900988",
            "(batch control), entry hash (positions 11-20): is 18900988, "
            "but its entries add up to 18900987",
        ),
        (
            8,
            21,
            32,
            "000000007511",
            "(batch control), total debit entry dollar amount (positions "
            "21-32): is 7511, but its debits add up to 7510",
        ),
        (
            8,
            33,
            44,
            "000000124999",
            "(batch control), total credit entry dollar amount "
            "(positions 33-44): is 124999, but its credits add up to 125000",
        ),
        (
            8,
            2,
            4,
            "220",
            "(batch control), service class code (positions 2-4): is 220, but the "
            "batch header has 200",
        ),
        (
            8,
            45,
            54,
            "1234567891",
            "(batch control), company identification (positions 45-54): "
            "is '1234567891', but the batch header has '1234567890'",
        ),
        (
            8,
            88,
            94,
            "0000002",
            "(batch control), batch number (positions 88-94): is 2, but the batch header has 1",
        ),
        # The file control.
        (
            18,
            2,
            7,
            "000004",
            "(file control), batch count (positions 2-7): is 4, but the file has 3",
        ),
        (
            18,
            14,
            21,
            "00000009",
            "(file control), entry/addenda count (positions 14-21): is 9, but the batches have 10",
        ),
        (
            18,
            22,
            31,
            "0047801997",
            "(file control), entry hash (positions 22-31): is 47801997, "
            "but the batches add up to 47801996",
        ),
        (
            18,
            32,
            43,
            "000000014008",
            "(file control), total debit entry dollar amount in file "
            "(positions 32-43): is 14008, but the batches' debits add up to 14009",
        ),
        (
            18,
            44,
            55,
            "000001115002",
            "(file control), total credit entry dollar amount in file "
            "(positions 44-55): is 1115002, but the batches' credits add up to 1115001",
        ),
        (
            18,
            8,
            13,
            "000003",
            "(file control), block count (positions 8-13): is 3, but the file's 20 records make 2",
        ),
        (18, 94, 94, "X", "(file control), reserved (positions 56-94)"),
    ],
)
def test_controls_that_do_not_add_up(record, start, end, text, message):
    error = refused(patched(outbound_file(), record, start, end, text), record, message)
    assert error.field is not None


@pytest.mark.parametrize(
    ("record", "start", "end", "text", "message"),
    [
        (
            1,
            13,
            13,
            "8",
            "(file header), immediate destination (positions 4-13): check digit 8 "
            "is wrong for DFI identification 09100001",
        ),
        (
            3,
            12,
            12,
            "2",
            "(entry detail), receiving DFI identification and check digit "
            "(positions 4-12): check digit 2 is wrong",
        ),
        (
            3,
            30,
            39,
            "000012500O",
            "(entry detail), amount (positions 30-39): '000012500O' is not numeric",
        ),
        (
            2,
            70,
            75,
            "260231",
            "(batch header), effective entry date (positions 70-75): '260231' is not a date YYMMDD",
        ),
        (
            2,
            51,
            53,
            "CTX",
            "(batch header), standard entry class code (positions 51-53): 'CTX' "
            "is not one of CCD, COR, PPD, WEB",
        ),
        (
            5,
            84,
            87,
            "0002",
            "(addenda 05), addenda sequence number (positions 84-87): is 2, but "
            "this is the entry's addenda 1",
        ),
        (
            5,
            88,
            94,
            "0000041",
            "(addenda 05), entry detail sequence number (positions 88-94): is "
            "0000041, but entry record 4's trace number ends with 0000042",
        ),
        (
            3,
            79,
            79,
            "1",
            "(entry detail), addenda record indicator (position 79): is 1, but "
            "record 4 is not an addenda record",
        ),
        (
            4,
            79,
            79,
            "0",
            "(entry detail), addenda record indicator (position 79): is 0, but an "
            "addenda record follows (record 5)",
        ),
        (
            6,
            30,
            39,
            "0000000001",
            "(entry detail), amount (positions 30-39): a prenote (transaction code 33) must be 0",
        ),
        (
            4,
            80,
            87,
            "09100002",
            "(entry detail), trace number (positions 80-94): "
            "091000020000042 does not start with the batch's ODFI identification 09100001",
        ),
        (
            9,
            88,
            94,
            "0000001",
            "(batch header), batch number (positions 88-94): 1 does not "
            "follow batch 1: batch numbers ascend through the file",
        ),
        (
            15,
            77,
            78,
            "X ",
            "(entry detail), discretionary data or payment type code (positions "
            "77-78): 'X' is not a WEB payment type code",
        ),
        (
            15,
            2,
            3,
            "22",
            "(entry detail), transaction code (positions 2-3): 22 is a credit in a "
            "debits-only batch",
        ),
    ],
)
def test_a_wrong_field(record, start, end, text, message):
    error = refused(patched(outbound_file(), record, start, end, text), record, message)
    assert error.positions is not None


def test_return_and_noc_addenda_rules():
    data = return_file()
    # A 99 carrying another trace number than its entry's.
    refused(
        patched(data, 4, 80, 94, "021000020000009"),
        4,
        "(addenda 99 (return)), trace number (positions 80-94): is 021000020000009, but "
        "entry record 3's trace number is 021000020000001",
    )
    # A return entry without its addenda.
    lines = lines_of(data)
    refused(
        file_of([*lines[:3], *lines[4:]]),
        3,
        "(entry detail), addenda record indicator (position 79): is 1, but record 4 is not "
        "an addenda record",
    )
    lines[2] = lines[2][:78] + "0" + lines[2][79:]
    refused(
        file_of([*lines[:3], *lines[4:]]),
        3,
        "transaction code 26 is a return or notification of change: its addenda 99 must follow",
    )
    # A 98 where a 99 must be: in a PPD batch an entry coded 26 is a return.
    noc = lines_of(noc_file())[3]
    refused(
        file_of([*lines_of(data)[:3], noc[:79] + lines_of(data)[2][79:], *lines_of(data)[4:]]),
        4,
        "(addenda 98 (notification of change)), addenda type code (positions 2-3): "
        "addenda type 98 follows entry record 3 (transaction code 26, PPD): a return takes "
        "addenda 99",
    )
    # A forward entry in a COR batch.
    refused(
        patched(noc_file(), 3, 2, 3, "27"),
        3,
        "(entry detail), transaction code (positions 2-3): 27 in a COR batch",
    )


def test_missing_padding():
    lines = lines_of(outbound_file())
    refused(
        file_of(lines[:-1]),
        18,
        "(file control), block count (positions 8-13): the file has "
        "19 records, not a multiple of the blocking factor 10",
    )


def test_a_whole_block_of_padding():
    lines = lines_of(write_file(file_header(), []))
    lines[1] = lines[1][:7] + "000002" + lines[1][13:]
    refused(file_of(lines + ["9" * 94] * 10), 2, "18 padding records follow: a whole block")


def test_a_truncated_file():
    lines = lines_of(outbound_file())
    refused(
        file_of(lines[:5]),
        5,
        "(addenda): the file ends after record 5 (addenda) without "
        "its file control: it is truncated",
    )
    with pytest.raises(NachaError, match="the file is empty"):
        parse(b"")


def test_trailing_garbage():
    data = outbound_file()
    refused(data + b"X" * 94 + b"\n", 21, "(record): only padding records")
    refused(data + b"\n", 21, "(record): is an empty line")
    refused(data + b"\x1a", 21, "is 1 characters long")
    lines = lines_of(data)
    lines[-1] = "9" * 93 + "8"
    refused(
        file_of(lines),
        20,
        "(file control): only padding records (94 '9's) may follow the file control",
    )


def test_line_ending_refusals():
    data = outbound_file()
    # One record ending with CR LF in a file of LF.
    lines = lines_of(data)
    mixed = "\n".join(lines[:3]) + "\r\n" + "\n".join(lines[3:]) + "\n"
    refused(mixed.encode(), 3, "ends with CR; record 1 ended with LF")
    crlf = "\r\n".join(lines[:6]) + "\n" + "\r\n".join(lines[6:]) + "\r\n"
    refused(crlf.encode(), 6, "ends with LF; record 1 ended with CR LF")
    # A bare CR inside a record.
    refused(patched(data, 4, 50, 50, "\r"), 4, "is 49 characters long")
    # Back to back, then a line break.
    joined = data.replace(b"\n", b"")
    broken = joined[: 94 * 3] + b"\n" + joined[94 * 3 :]
    refused(broken, 4, "record 1 ended with no line ending, so no record may")


def test_bytes_that_are_not_ascii():
    data = outbound_file()
    index = data.index(b"JANE ROE")
    bad = data[:index] + "JOSÉ".encode() + data[index + 4 :]
    refused(bad, 3, "is longer than 94 characters")
    bad = data[:index] + b"JAN\xc9 ROE" + data[index + 8 :]
    refused(bad, 3, "(entry detail): byte 0xC9 at position 58 is not ASCII")


def test_a_control_character_is_refused():
    refused(
        patched(outbound_file(), 3, 60, 60, "\x00"),
        3,
        "(entry detail), individual or receiving company name (positions 55-76): character "
        "'\\x00' at offset 6 is not printable ASCII",
    )


def test_parse_needs_a_source_it_can_read_twice():
    class OneWay(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    with pytest.raises(TypeError, match="seekable"):
        parse(OneWay())


def test_a_source_changed_between_the_two_readings_is_refused_then():
    stream = io.BytesIO(outbound_file())
    parsed = parse(stream)
    stream.seek(0)
    stream.write(patched(outbound_file(), 3, 30, 39, "0000000001")[:400])
    with pytest.raises(NachaError, match=r"record 8 \(batch control\), total credit"):
        list(parsed.entries())


# --- bounded memory ----------------------------------------------------------------------------


def test_checking_a_large_file_keeps_only_running_totals():
    """20,000 entries: checking the file and walking its entries holds no list of them (the
    peak is the same order as for 2,000 entries, far below 20,000 records)."""

    def peak(count: int) -> tuple[int, bytes]:
        entries = (
            Entry(entry(22, RDFI_A, 1, trace_number=trace_number(ODFI, index + 1)))
            for index in range(count)
        )
        data = write_file(file_header(), [Batch(batch_header("PPD", 220), entries)])
        stream = io.BytesIO(data)
        tracemalloc.start()
        parsed = parse(stream)
        walked = sum(1 for _ in parsed.entries())
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert walked == count
        return top, data

    small, _ = peak(2_000)
    large, data = peak(20_000)
    # One EntryDetail alone is ~200 bytes: a list of 20,000 would be ~4 MB. What is held is the
    # read buffer (64 KiB chunks) and one record at a time.
    assert large < 400_000, large
    assert large < small * 1.5, (small, large)
    assert len(data) > 20_000 * 94
