"""Each NACHA record kind, byte for byte against its layout: the expected line is built by hand
from the positions the standard prints (tests/payments/nacha_helpers.by_positions), then the
record is written (`to_line`) and read back (`from_line`)."""

import datetime

import pytest

from payments.nacha.addenda import (
    ContestedReturnAddenda,
    DishonoredReturnAddenda,
    NotificationOfChange,
    PaymentAddenda,
    ReturnAddenda,
    parse_addenda,
)
from payments.nacha.batch_control import BatchControl
from payments.nacha.batch_header import BatchHeader
from payments.nacha.entry import EntryDetail
from payments.nacha.fields import NachaError
from payments.nacha.file_control import FileControl
from payments.nacha.file_header import FileHeader
from tests.payments.positions import by_positions


def assert_round_trip(record, line):
    assert record.to_line() == line
    assert len(line) == 94
    assert type(record).from_line(line, 1) == record


def test_file_header():
    line = by_positions(
        (1, 1, "1"),
        (2, 3, "01"),
        (4, 13, " 091000019"),
        (14, 23, "1234567890"),
        (24, 29, "260305"),
        (30, 33, "1645"),
        (34, 34, "B"),
        (35, 37, "094"),
        (38, 39, "10"),
        (40, 40, "1"),
        (41, 63, "WELLS FARGO            "),
        (64, 86, "TX DEMO BANK           "),
        (87, 94, "REF00001"),
    )
    record = FileHeader(
        immediate_destination="091000019",
        immediate_origin="1234567890",
        file_creation_date=datetime.date(2026, 3, 5),
        file_creation_time=datetime.time(16, 45),
        file_id_modifier="B",
        immediate_destination_name="Wells Fargo",  # uppercased when made in code
        immediate_origin_name="TX Demo Bank",
        reference_code="REF00001",
    )
    assert_round_trip(record, line)
    assert record.immediate_destination_name == "WELLS FARGO"


def test_file_header_origin_routing_number_takes_a_leading_blank_and_time_may_be_blank():
    record = FileHeader(
        immediate_destination="021000021",
        immediate_origin="091000019",
        file_creation_date=datetime.date(2026, 12, 31),
    )
    assert record.to_line()[3:33] == " 021000021 091000019261231    "
    assert FileHeader.from_line(record.to_line()) == record


def test_batch_header():
    line = by_positions(
        (1, 1, "5"),
        (2, 4, "220"),
        (5, 20, "TX DEMO BANK    "),
        (21, 40, "PAYROLL MARCH       "),
        (41, 50, "1234567890"),
        (51, 53, "PPD"),
        (54, 63, "PAYROLL   "),
        (64, 69, "MAR 06"),
        (70, 75, "260306"),
        (76, 78, "   "),
        (79, 79, "1"),
        (80, 87, "09100001"),
        (88, 94, "0000042"),
    )
    record = BatchHeader(
        service_class_code=220,
        company_name="TX Demo Bank",
        company_discretionary_data="payroll march",
        company_identification="1234567890",
        standard_entry_class_code="PPD",
        company_entry_description="Payroll",
        company_descriptive_date="Mar 06",
        effective_entry_date=datetime.date(2026, 3, 6),
        odfi_identification="09100001",
        batch_number=42,
    )
    assert_round_trip(record, line)


def test_batch_header_settlement_date_is_a_julian_day():
    line = by_positions(
        (1, 1, "5"),
        (2, 4, "200"),
        (5, 20, "MA DUA          "),
        (21, 40, "MASS UNEMPLOYMENT DD"),
        (41, 50, "I046002284"),
        (51, 53, "COR"),
        (54, 63, " MA UI TAX"),
        (64, 69, "200409"),
        (70, 75, "200407"),
        (76, 78, "100"),
        (79, 79, "1"),
        (80, 87, "01150012"),
        (88, 94, "0000004"),
    )
    record = BatchHeader.from_line(line)
    assert record.settlement_date == 100
    # Read as written: the leading blank of the description stays.
    assert record.company_entry_description == " MA UI TAX"
    assert record.to_line() == line


@pytest.mark.parametrize(
    ("sec", "identification", "name", "discretionary"),
    [
        # PPD: Individual Identification Number, Individual Name, Discretionary Data.
        ("PPD", "EMP-0042", "JANE ROE", "A1"),
        # CCD: Identification Number, Receiving Company Name, Discretionary Data.
        ("CCD", "VENDOR-7", "ACME SUPPLY CO", ""),
        # WEB: Individual Identification Number, Individual Name, Payment Type Code.
        ("WEB", "ORDER 991", "ANN LEE", "S"),
    ],
)
def test_entry_detail(sec, identification, name, discretionary):
    line = by_positions(
        (1, 1, "6"),
        (2, 3, "27"),
        (4, 11, "02100002"),
        (12, 12, "1"),
        (13, 29, "12345678-9       "),
        (30, 39, "0000007510"),
        (40, 54, identification.ljust(15)),
        (55, 76, name.ljust(22)),
        (77, 78, discretionary.ljust(2)),
        (79, 79, "1"),
        (80, 94, "091000010000041"),
    )
    record = EntryDetail(
        transaction_code=27,
        routing_number="021000021",
        dfi_account_number="12345678-9",
        amount=7510,
        identification_number=identification,
        receiver_name=name.title(),
        discretionary_data=discretionary,
        addenda_record_indicator=1,
        trace_number="091000010000041",
    )
    assert_round_trip(record, line)
    assert record.rdfi_identification == "02100002"
    assert record.code.direction == "debit" and record.code.account_type == "checking"


def test_entry_detail_keeps_what_a_file_holds():
    # Read from a file, lowercase and leading blanks are kept: the record re-writes the line.
    line = by_positions(
        (1, 1, "6"),
        (2, 3, "22"),
        (4, 12, "231380104"),
        (13, 29, "12345678         "),
        (30, 39, "0000010000"),
        (40, 54, "#789654        "),
        (55, 76, "   John Doe           "),
        (77, 78, "S "),
        (79, 79, "0"),
        (80, 94, "121042880000001"),
    )
    record = EntryDetail.from_line(line)
    assert record.receiver_name == "   John Doe"
    assert record.to_line() == line


def test_payment_addenda():
    text = "RMR*IV*2026-0031**990000\\"
    line = by_positions(
        (1, 1, "7"),
        (2, 3, "05"),
        (4, 83, text.ljust(80)),
        (84, 87, "0001"),
        (88, 94, "0000041"),
    )
    record = PaymentAddenda(
        payment_related_information=text, entry_detail_sequence_number="0000041"
    )
    assert_round_trip(record, line)
    assert parse_addenda(line) == record


def test_notification_of_change():
    line = by_positions(
        (1, 1, "7"),
        (2, 3, "98"),
        (4, 6, "C03"),
        (7, 21, "091000010000041"),
        (22, 27, "      "),
        (28, 35, "02100002"),
        (36, 64, "021000021   1918171614       "),
        (65, 79, " " * 15),
        (80, 94, "021000020000007"),
    )
    record = NotificationOfChange(
        change_code="C03",
        original_entry_trace_number="091000010000041",
        original_rdfi_identification="02100002",
        corrected_data="021000021   1918171614",
        trace_number="021000020000007",
    )
    assert_round_trip(record, line)
    assert parse_addenda(line) == record
    correction = record.correction()
    assert (correction.routing_number, correction.account_number) == ("021000021", "1918171614")
    assert correction.transaction_code is None


def test_return():
    line = by_positions(
        (1, 1, "7"),
        (2, 3, "99"),
        (4, 6, "R15"),
        (7, 21, "091000010000041"),
        (22, 27, "260301"),
        (28, 35, "02100002"),
        (36, 79, "DECEASED".ljust(44)),
        (80, 94, "021000020000007"),
    )
    record = ReturnAddenda(
        return_reason_code="R15",
        original_entry_trace_number="091000010000041",
        date_of_death=datetime.date(2026, 3, 1),
        original_rdfi_identification="02100002",
        addenda_information="deceased",
        trace_number="021000020000007",
    )
    assert_round_trip(record, line)
    assert parse_addenda(line) == record
    assert record.death_date == datetime.date(2026, 3, 1)
    assert record.reason.normalized == "account_holder_deceased"


def test_return_date_of_death_blank_or_zeros_is_none_and_kept_as_written():
    for written in ("      ", "000000"):
        line = by_positions(
            (1, 3, "799"),
            (4, 6, "R03"),
            (7, 21, "221172180197699"),
            (22, 27, written),
            (28, 35, "01140153"),
            (36, 79, " " * 44),
            (80, 94, "011500129750209"),
        )
        record = ReturnAddenda.from_line(line)
        assert record.death_date is None
        assert record.to_line() == line


def test_dishonored_return():
    line = by_positions(
        (1, 1, "7"),
        (2, 3, "99"),
        (4, 6, "R69"),
        (7, 21, "091000010000041"),
        (22, 27, "      "),
        (28, 35, "02100002"),
        (36, 38, "   "),
        (39, 53, "021000020000007"),
        (54, 56, "065"),
        (57, 58, "01"),
        (59, 79, "01*03".ljust(21)),
        (80, 94, "091000010000099"),
    )
    record = DishonoredReturnAddenda(
        dishonored_return_reason_code="R69",
        original_entry_trace_number="091000010000041",
        original_rdfi_identification="02100002",
        return_trace_number="021000020000007",
        return_settlement_date=65,
        return_reason_code="01",
        addenda_information="01*03",
        trace_number="091000010000099",
    )
    assert_round_trip(record, line)
    assert parse_addenda(line) == record
    assert record.reason.kind == "dishonored"


def test_contested_dishonored_return():
    line = by_positions(
        (1, 1, "7"),
        (2, 3, "99"),
        (4, 6, "R73"),
        (7, 21, "091000010000041"),
        (22, 27, "260303"),
        (28, 35, "02100002"),
        (36, 38, "064"),
        (39, 53, "021000020000007"),
        (54, 56, "065"),
        (57, 58, "01"),
        (59, 73, "091000010000099"),
        (74, 76, "068"),
        (77, 78, "68"),
        (79, 79, " "),
        (80, 94, "021000020000012"),
    )
    record = ContestedReturnAddenda(
        contested_return_reason_code="R73",
        original_entry_trace_number="091000010000041",
        date_original_entry_returned=datetime.date(2026, 3, 3),
        original_rdfi_identification="02100002",
        original_settlement_date=64,
        return_trace_number="021000020000007",
        return_settlement_date=65,
        return_reason_code="01",
        dishonored_return_trace_number="091000010000099",
        dishonored_return_settlement_date=68,
        dishonored_return_reason_code="68",
        trace_number="021000020000012",
    )
    assert_round_trip(record, line)
    assert parse_addenda(line) == record
    assert record.reason.kind == "contested"


def test_the_reason_code_chooses_the_99_layout():
    base = "799{code}091000010000041      02100002" + " " * 44 + "021000020000007"
    assert isinstance(parse_addenda(base.format(code="R01")), ReturnAddenda)
    # A code the table does not know is still a return: a fact to book, not to refuse.
    unknown = parse_addenda(base.format(code="R90"))
    assert isinstance(unknown, ReturnAddenda)
    assert unknown.reason.normalized == "unknown"
    with pytest.raises(NachaError, match=r"return trace number \(positions 39-53\)"):
        # R68 takes the dishonored layout: blanks where its return trace number must be.
        parse_addenda(base.format(code="R68"), 9)


def test_batch_control():
    line = by_positions(
        (1, 1, "8"),
        (2, 4, "200"),
        (5, 10, "000005"),
        (11, 20, "0016700034"),
        (21, 32, "000000007510"),
        (33, 44, "000000125000"),
        (45, 54, "1234567890"),
        (55, 73, " " * 19),
        (74, 79, " " * 6),
        (80, 87, "09100001"),
        (88, 94, "0000001"),
    )
    record = BatchControl(
        service_class_code=200,
        entry_addenda_count=5,
        entry_hash=16700034,
        total_debit=7510,
        total_credit=125000,
        company_identification="1234567890",
        odfi_identification="09100001",
        batch_number=1,
    )
    assert_round_trip(record, line)


def test_file_control():
    line = by_positions(
        (1, 1, "9"),
        (2, 7, "000003"),
        (8, 13, "000002"),
        (14, 21, "00000011"),
        (22, 31, "0033600046"),
        (32, 43, "000000014009"),
        (44, 55, "000001115001"),
        (56, 94, " " * 39),
    )
    record = FileControl(
        batch_count=3,
        block_count=2,
        entry_addenda_count=11,
        entry_hash=33600046,
        total_debit=14009,
        total_credit=1115001,
    )
    assert_round_trip(record, line)


# --- refusals of one record: the field and its positions named ---------------------------------


def test_a_wrong_length_names_the_record():
    with pytest.raises(NachaError) as refused:
        FileControl.from_line("9" + "0" * 54 + " " * 38, 7)
    assert str(refused.value) == "record 7 (file control): is 93 characters long; a record has 94"


ENTRY_LINE = by_positions(
    (1, 1, "6"),
    (2, 3, "27"),
    (4, 11, "02100002"),
    (12, 12, "1"),
    (13, 29, "12345678-9       "),
    (30, 39, "0000007510"),
    (40, 54, "EMP-0042       "),
    (55, 76, "JANE ROE              "),
    (77, 78, "A1"),
    (79, 79, "1"),
    (80, 94, "091000010000041"),
)


@pytest.mark.parametrize(
    ("start", "end", "text", "message"),
    [
        (2, 3, "99", "transaction code (positions 2-3): '99' is not one of 21, 22, 23, 26"),
        # The check digit is read with the DFI identification it checks: one routing number.
        (
            12,
            12,
            "7",
            "receiving DFI identification and check digit (positions 4-12): check "
            "digit 7 is wrong for DFI identification 02100002 (the ABA check digit is 1)",
        ),
        (
            13,
            29,
            " " * 17,
            "DFI account number (positions 13-29): is blank; the field is mandatory",
        ),
        (30, 39, "00000075.1", "amount (positions 30-39): '00000075.1' is not numeric"),
        (30, 39, "      7510", "amount (positions 30-39): '      7510' is not numeric"),
        (
            55,
            76,
            "JANE\tROE".ljust(22),
            "individual or receiving company name (positions 55-76): "
            "character '\\t' at offset 5 is not printable ASCII",
        ),
        (79, 79, "2", "addenda record indicator (position 79): '2' is not one of 0, 1"),
        (80, 94, "09100001000004X", "trace number (positions 80-94): '09100001000004X' is not 15"),
    ],
)
def test_an_entry_field_refused(start, end, text, message):
    bad = ENTRY_LINE[: start - 1] + text + ENTRY_LINE[end:]
    with pytest.raises(NachaError) as refused:
        EntryDetail.from_line(bad, 12)
    assert str(refused.value).startswith(f"record 12 (entry detail), {message}")
    assert refused.value.record_number == 12
    assert refused.value.positions[1] == end


def test_a_prenote_with_an_amount_is_refused():
    line = "623" + ENTRY_LINE[3:29] + "0000000001" + ENTRY_LINE[39:78] + "0" + ENTRY_LINE[79:]
    with pytest.raises(
        NachaError,
        match=r"record 4 \(entry detail\), amount \(positions 30-39\): "
        r"a prenote \(transaction code 23\) must be 0",
    ):
        EntryDetail.from_line(line, 4)


def test_reserved_fields_must_be_blank():
    line = "9000001000001000000020002100002000000000000000000007510" + " " * 38 + "X"
    with pytest.raises(
        NachaError,
        match=r"record 9 \(file control\), reserved \(positions "
        r"56-94\): .* is not blank",
    ):
        FileControl.from_line(line, 9)


def test_a_constant_field_is_checked():
    line = FileHeader(
        immediate_destination="091000019",
        immediate_origin="1234567890",
        file_creation_date=datetime.date(2026, 3, 5),
    ).to_line()
    with pytest.raises(
        NachaError,
        match=r"record 1 \(file header\), blocking factor \(positions "
        r"38-39\): '20' is not '10'",
    ):
        FileHeader.from_line(line[:37] + "20" + line[39:], 1)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"receiver_name": "José Núñez"}, "character 'é' at offset 4 is not printable ASCII"),
        ({"receiver_name": "x" * 23}, "is 23 characters; the field holds 22"),
        ({"amount": 10**10}, "10000000000 does not fit 10 digits"),
        ({"amount": -1}, "-1 does not fit 10 digits"),
        ({"routing_number": "021000022"}, "check digit 2 is wrong"),
        ({"transaction_code": 24}, "24 is not one of 21, 22, 23"),
        ({"trace_number": "9100001000004"}, "is 13 digits; the field holds 15"),
    ],
)
def test_a_record_made_in_code_refuses_what_it_could_not_write(changes, message):
    values = dict(
        transaction_code=22,
        routing_number="021000021",
        dfi_account_number="1",
        amount=1,
        trace_number="091000010000001",
    )
    with pytest.raises(NachaError, match=message) as refused:
        EntryDetail(**(values | changes))
    assert refused.value.record == "entry detail"
    assert refused.value.field is not None


def test_two_digit_years_are_2000_to_2099():
    header = FileHeader(
        immediate_destination="091000019",
        immediate_origin="1234567890",
        file_creation_date=datetime.date(2099, 12, 31),
    )
    assert header.to_line()[23:29] == "991231"
    with pytest.raises(NachaError, match="outside 2000-2099"):
        header.replace(file_creation_date=datetime.date(1999, 12, 31))
    with pytest.raises(
        NachaError, match=r"file creation date \(positions 24-29\): '260230' is not"
    ):
        FileHeader.from_line(header.to_line()[:23] + "260230" + header.to_line()[29:], 1)
