"""The interbank profile: pacs.008.001.08 (credit transfers between banks), pacs.002.001.10
(their status) and pacs.004.001.09 (returns). What TX writes validates against the official XSD,
independently too, and re-parses to the same message; the reader refuses hostile documents,
another message type, counts and sums that do not add up, and banks not named by their BIC."""

import datetime

import pytest

from payments.iso20022.errors import Iso20022Error
from payments.iso20022.interbank import GroupHeader
from payments.iso20022.messages import PACS_002, PACS_004, PACS_008, PAIN_001
from payments.iso20022.pacs002 import (
    InterbankStatusReport,
    InterbankTransactionStatus,
    read_status_report,
    write_status_report,
)
from payments.iso20022.pacs004 import (
    PaymentReturn,
    ReturnedTransaction,
    read_return,
    write_return,
)
from payments.iso20022.pacs008 import (
    FIToFICreditTransfer,
    InterbankCreditTransfer,
    read_transfers,
    write_transfers,
)
from payments.iso20022.remittance import CreditorReference, Unstructured
from payments.iso20022.status_reasons import StatusReason
from tests.payments.iso20022_helpers import (
    CREATED,
    CREDITOR_IBAN_FR,
    CREDITOR_IBAN_NL,
    DEBTOR_IBAN,
    RF_REFERENCE,
    independently_valid,
)
from tests.payments.test_iso20022_reader_safety import BILLION_LAUGHS, EXTERNAL_ENTITY

SETTLED = datetime.date(2025, 3, 4)
TX_BANK = "COBADEFFXXX"
PEER_BANK = "ABNANL2A"


def header(message_id: str = "TX-IB-0001", **changes) -> GroupHeader:
    values = {
        "message_id": message_id,
        "created_at": CREATED,
        "settlement_date": SETTLED,
        "clearing_system": "ST2",
        "instructing_agent_bic": TX_BANK,
        "instructed_agent_bic": PEER_BANK,
    }
    return GroupHeader(**(values | changes))


def credit(number: int, **changes) -> InterbankCreditTransfer:
    values = {
        "instruction_id": f"INSTR-{number}",
        "end_to_end_id": f"E2E-{number}",
        "transaction_id": f"TX-TXN-{number}",
        "amount": 100 * number + 5,
        "debtor_name": "Acme Payments GmbH",
        "debtor_iban": DEBTOR_IBAN,
        "debtor_bic": TX_BANK,
        "creditor_name": f"Creditor {number}",
        "creditor_iban": CREDITOR_IBAN_NL,
        "creditor_bic": PEER_BANK,
        "remittance": Unstructured(f"Invoice {number}"),
    }
    return InterbankCreditTransfer(**(values | changes))


def transfers() -> FIToFICreditTransfer:
    return FIToFICreditTransfer(
        header=header(),
        transfers=(
            credit(1),
            credit(2, remittance=CreditorReference(RF_REFERENCE), instruction_id=None),
            credit(
                3,
                instant=True,
                accepted_at=CREATED,
                remittance=None,
                creditor_name="Zoë Müller-Lüdenscheidt",
                creditor_iban=CREDITOR_IBAN_FR,
                creditor_bic="BNPAFRPPXXX",
            ),
            credit(4, amount=99_999_999_999),
        ),
    )


def status_report() -> InterbankStatusReport:
    """The peer bank's answer to `transfers()`: two rejected (AC04 with an originator, AM04 with
    text), one accepted; four in all, counted per status."""
    return InterbankStatusReport(
        message_id="PEER-STS-0001",
        created_at=CREATED + datetime.timedelta(hours=1),
        instructing_agent_bic=PEER_BANK,
        instructed_agent_bic=TX_BANK,
        original_message_id="TX-IB-0001",
        original_message_type="pacs.008.001.08",
        original_count=4,
        original_control_sum=100_000_000_614,
        group_status="PART",
        transactions=(
            InterbankTransactionStatus(
                status_id="STS-1",
                original_instruction_id="INSTR-1",
                original_end_to_end_id="E2E-1",
                original_transaction_id="TX-TXN-1",
                status="RJCT",
                reasons=(StatusReason("AC04", originator_bic=PEER_BANK),),
                original_amount=105,
                original_settlement_date=SETTLED,
            ),
            InterbankTransactionStatus(
                original_end_to_end_id="E2E-2",
                original_transaction_id="TX-TXN-2",
                status="RJCT",
                reasons=(StatusReason("AM04", additional_information=("Funds short",)),),
            ),
            InterbankTransactionStatus(
                original_end_to_end_id="E2E-3",
                original_transaction_id="TX-TXN-3",
                status="ACCC",
                accepted_at=CREATED + datetime.timedelta(seconds=3),
            ),
        ),
    )


def payment_return() -> PaymentReturn:
    """The peer bank returns two transfers after settlement: AC04 whole, MS03 less 2.50 of
    charges, and an unknown code."""
    return PaymentReturn(
        header=header("PEER-RTR-0001", settlement_date=SETTLED + datetime.timedelta(days=2)),
        transactions=(
            ReturnedTransaction(
                return_id="RTR-1",
                original_message_id="TX-IB-0001",
                original_message_type="pacs.008.001.08",
                original_instruction_id="INSTR-1",
                original_end_to_end_id="E2E-1",
                original_transaction_id="TX-TXN-1",
                original_amount=105,
                returned_amount=105,
                reason=StatusReason("AC04", originator_bic=PEER_BANK),
                original_settlement_date=SETTLED,
                debtor_name="Acme Payments GmbH",
                debtor_iban=DEBTOR_IBAN,
                creditor_name="Creditor 1",
                creditor_iban=CREDITOR_IBAN_NL,
            ),
            ReturnedTransaction(
                return_id="RTR-4",
                original_message_id="TX-IB-0001",
                original_message_type="pacs.008.001.08",
                original_end_to_end_id="E2E-4",
                original_transaction_id="TX-TXN-4",
                original_amount=99_999_999_999,
                returned_amount=99_999_999_749,
                reason=StatusReason("MS03", additional_information=("Beneficiary unknown",)),
            ),
            ReturnedTransaction(
                return_id="RTR-2",
                original_message_id="TX-IB-0001",
                original_message_type="pacs.008.001.08",
                original_end_to_end_id="E2E-2",
                original_transaction_id="TX-TXN-2",
                original_amount=205,
                returned_amount=205,
                reason=StatusReason("ZZ99"),
            ),
        ),
    )


def _refused(reader, data: str | bytes, message_type, expected: str) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        reader(data.encode() if isinstance(data, str) else data)
    assert caught.value.message_type == message_type.name
    assert expected in str(caught.value), str(caught.value)
    return caught.value


# --- pacs.008 ------------------------------------------------------------------------------------


def test_written_transfers_validate_and_round_trip():
    made = transfers()
    data = write_transfers(made)
    independently_valid(data, PACS_008)
    assert read_transfers(data) == made
    text = data.decode()
    assert "<NbOfTxs>4</NbOfTxs>" in text
    assert '<TtlIntrBkSttlmAmt Ccy="EUR">1000000006.14</TtlIntrBkSttlmAmt>' in text
    assert "<CtrlSum>1000000006.14</CtrlSum>" in text
    assert "<IntrBkSttlmDt>2025-03-04</IntrBkSttlmDt>" in text
    assert "<SttlmMtd>CLRG</SttlmMtd>" in text and "<Prtry>ST2</Prtry>" in text
    assert "<TxId>TX-TXN-3</TxId>" in text and "<Cd>INST</Cd>" in text


def test_a_wrong_total_settlement_amount_is_refused():
    written = write_transfers(transfers()).decode()
    error = _refused(
        read_transfers,
        written.replace(">1000000006.14</TtlIntrBkSttlmAmt>", ">1000000006.15</TtlIntrBkSttlmAmt>"),
        PACS_008,
        "TtlIntrBkSttlmAmt is 1000000006.15, but the amounts add up to 1000000006.14",
    )
    assert error.path == "/Document/FIToFICstmrCdtTrf/GrpHdr/TtlIntrBkSttlmAmt"


def test_a_wrong_count_and_a_wrong_control_sum_are_refused():
    written = write_transfers(transfers()).decode()
    _refused(
        read_transfers,
        written.replace("<NbOfTxs>4</NbOfTxs>", "<NbOfTxs>3</NbOfTxs>"),
        PACS_008,
        "NbOfTxs is 3, but there are 4",
    )
    _refused(
        read_transfers,
        written.replace("<CtrlSum>1000000006.14</CtrlSum>", "<CtrlSum>6.14</CtrlSum>"),
        PACS_008,
        "CtrlSum is 6.14",
    )


def test_a_total_in_another_currency_is_refused():
    written = write_transfers(transfers()).decode()
    _refused(
        read_transfers,
        written.replace('<TtlIntrBkSttlmAmt Ccy="EUR">', '<TtlIntrBkSttlmAmt Ccy="USD">'),
        PACS_008,
        "not EUR",
    )


def test_a_bank_without_its_bic_is_refused_between_banks():
    written = write_transfers(transfers()).decode()
    error = _refused(
        read_transfers,
        written.replace(
            f"<DbtrAgt>\n        <FinInstnId>\n          <BICFI>{TX_BANK}</BICFI>",
            "<DbtrAgt>\n        <FinInstnId>\n          <Othr><Id>NOTPROVIDED</Id></Othr>",
            1,
        ),
        PACS_008,
        "DbtrAgt is not identified by a BIC",
    )
    assert error.path == "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/DbtrAgt"


def test_a_transaction_without_its_transaction_id_is_refused():
    written = write_transfers(transfers()).decode()
    _refused(
        read_transfers,
        written.replace("<TxId>TX-TXN-2</TxId>", ""),
        PACS_008,
        "PmtId/TxId is missing",
    )


def test_a_service_level_other_than_sepa_is_refused():
    written = write_transfers(transfers()).decode()
    _refused(
        read_transfers, written.replace("<Cd>SEPA</Cd>", "<Cd>URGP</Cd>", 1), PACS_008, "not SEPA"
    )


def test_settlement_dates_given_per_transaction_are_read_and_must_agree():
    written = write_transfers(transfers()).decode()
    moved = written.replace("<IntrBkSttlmDt>2025-03-04</IntrBkSttlmDt>", "", 1).replace(
        "</IntrBkSttlmAmt>", "</IntrBkSttlmAmt><IntrBkSttlmDt>2025-03-04</IntrBkSttlmDt>"
    )
    assert read_transfers(moved.encode()) == transfers()
    _refused(
        read_transfers,
        moved.replace("<IntrBkSttlmDt>2025-03-04", "<IntrBkSttlmDt>2025-03-05", 1),
        PACS_008,
        "settle on different days",
    )
    _refused(
        read_transfers,
        written.replace(
            "</IntrBkSttlmAmt>", "</IntrBkSttlmAmt><IntrBkSttlmDt>2025-03-05</IntrBkSttlmDt>", 1
        ),
        PACS_008,
        "the transaction settles on 2025-03-05, the message on 2025-03-04",
    )


def test_a_settlement_method_outside_sepa_is_refused():
    written = write_transfers(transfers()).decode()
    _refused(
        read_transfers,
        written.replace("<SttlmMtd>CLRG</SttlmMtd>", "<SttlmMtd>COVE</SttlmMtd>"),
        PACS_008,
        "not SEPA's (CLRG, INDA, INGA)",
    )


def test_the_instant_flag_and_acceptance_time_round_trip():
    third = read_transfers(write_transfers(transfers())).transfers[2]
    assert third.instant and third.accepted_at == CREATED
    assert not read_transfers(write_transfers(transfers())).transfers[0].instant


# --- pacs.002 ------------------------------------------------------------------------------------


def test_written_status_report_validates_and_round_trips():
    made = status_report()
    data = write_status_report(made)
    independently_valid(data, PACS_002)
    assert read_status_report(data) == made
    first = made.transactions[0].reasons[0]
    assert (first.code, first.normalized, first.originator_bic) == (
        "AC04",
        "account_closed",
        PEER_BANK,
    )


def test_status_report_answers_the_transfers_it_names():
    sent = read_transfers(write_transfers(transfers()))
    report = read_status_report(write_status_report(status_report()))
    assert report.original_message_id == sent.header.message_id
    ids = {each.transaction_id for each in sent.transfers}
    assert {each.original_transaction_id for each in report.transactions} <= ids
    assert report.original_control_sum == sent.total


def _per_status(counts: str) -> bytes:
    return (
        write_status_report(status_report())
        .decode()
        .replace("</GrpSts>", "</GrpSts>" + counts)
        .encode()
    )


def test_counts_per_status_that_add_up_are_accepted_and_not_kept():
    counts = (
        "<NbOfTxsPerSts><DtldNbOfTxs>2</DtldNbOfTxs><DtldSts>RJCT</DtldSts>"
        "<DtldCtrlSum>3.10</DtldCtrlSum></NbOfTxsPerSts>"
        "<NbOfTxsPerSts><DtldNbOfTxs>2</DtldNbOfTxs><DtldSts>ACCC</DtldSts>"
        "<DtldCtrlSum>1000000003.04</DtldCtrlSum></NbOfTxsPerSts>"
    )
    assert read_status_report(_per_status(counts)) == status_report()


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        (
            "<NbOfTxsPerSts><DtldNbOfTxs>1</DtldNbOfTxs><DtldSts>RJCT</DtldSts></NbOfTxsPerSts>"
            "<NbOfTxsPerSts><DtldNbOfTxs>3</DtldNbOfTxs><DtldSts>ACCC</DtldSts></NbOfTxsPerSts>",
            "1 transactions are RJCT, but the report lists 2",
        ),
        (
            "<NbOfTxsPerSts><DtldNbOfTxs>2</DtldNbOfTxs><DtldSts>RJCT</DtldSts></NbOfTxsPerSts>"
            "<NbOfTxsPerSts><DtldNbOfTxs>3</DtldNbOfTxs><DtldSts>ACCC</DtldSts></NbOfTxsPerSts>",
            "OrgnlNbOfTxs is 4, but the counts per status add up to 5",
        ),
        (
            "<NbOfTxsPerSts><DtldNbOfTxs>2</DtldNbOfTxs><DtldSts>RJCT</DtldSts>"
            "<DtldCtrlSum>3.10</DtldCtrlSum></NbOfTxsPerSts>"
            "<NbOfTxsPerSts><DtldNbOfTxs>2</DtldNbOfTxs><DtldSts>ACCC</DtldSts>"
            "<DtldCtrlSum>3.04</DtldCtrlSum></NbOfTxsPerSts>",
            "OrgnlCtrlSum is 1000000006.14, but the sums per status add up to 6.14",
        ),
    ],
)
def test_counts_per_status_that_do_not_add_up_are_refused(counts, expected):
    _refused(read_status_report, _per_status(counts), PACS_002, expected)


def test_more_transactions_than_the_original_count_are_refused():
    written = write_status_report(status_report()).decode()
    error = _refused(
        read_status_report,
        written.replace("<OrgnlNbOfTxs>4</OrgnlNbOfTxs>", "<OrgnlNbOfTxs>2</OrgnlNbOfTxs>"),
        PACS_002,
        "the report answers 3 transactions of an original message of 2",
    )
    assert error.path == "/Document/FIToFIPmtStsRpt/OrgnlGrpInfAndSts"


def test_a_status_without_the_transaction_id_it_answers_is_refused():
    written = write_status_report(status_report()).decode()
    error = _refused(
        read_status_report,
        written.replace("<OrgnlTxId>TX-TXN-2</OrgnlTxId>", ""),
        PACS_002,
        "OrgnlTxId is missing",
    )
    assert error.path == "/Document/FIToFIPmtStsRpt/TxInfAndSts[2]"


def test_a_report_of_two_original_messages_is_refused():
    written = write_status_report(status_report()).decode()
    group = written[written.index("<OrgnlGrpInfAndSts>") : written.index("</OrgnlGrpInfAndSts>")]
    doubled = written.replace(
        "</OrgnlGrpInfAndSts>", "</OrgnlGrpInfAndSts>" + group + "</OrgnlGrpInfAndSts>", 1
    )
    _refused(read_status_report, doubled, PACS_002, "answers one original message")


def test_unknown_statuses_and_reasons_are_read_not_refused():
    written = write_status_report(status_report()).decode()
    report = read_status_report(
        written.replace("<TxSts>ACCC</TxSts>", "<TxSts>ZZZZ</TxSts>")
        .replace("<Cd>AM04</Cd>", "<Cd>ZZ99</Cd>")
        .encode()
    )
    assert report.transactions[2].status == "ZZZZ"
    assert report.transactions[1].reasons[0].normalized == "unknown"


# --- pacs.004 ------------------------------------------------------------------------------------


def test_written_return_validates_and_round_trips():
    made = payment_return()
    data = write_return(made)
    independently_valid(data, PACS_004)
    assert read_return(data) == made
    text = data.decode()
    assert '<TtlRtrdIntrBkSttlmAmt Ccy="EUR">1000000000.59</TtlRtrdIntrBkSttlmAmt>' in text
    assert "<AnyBIC>ABNANL2A</AnyBIC>" in text


@pytest.mark.parametrize(
    ("code", "normalized"),
    [("AC04", "account_closed"), ("MS03", "refused_by_bank"), ("ZZ99", "unknown")],
)
def test_return_reasons_are_kept_raw_beside_their_normalized_name(code, normalized):
    returned = {
        each.reason.code: each for each in read_return(write_return(payment_return())).transactions
    }
    assert returned[code].reason.normalized == normalized


def test_a_returned_amount_less_its_charges_is_read():
    second = read_return(write_return(payment_return())).transactions[1]
    assert second.charges == 250


def test_a_return_of_more_than_the_original_is_refused():
    written = write_return(payment_return()).decode()
    error = _refused(
        read_return,
        written.replace(
            '<RtrdIntrBkSttlmAmt Ccy="EUR">1.05<', '<RtrdIntrBkSttlmAmt Ccy="EUR">1.06<'
        ).replace(">1000000000.59</", ">1000000000.60</"),
        PACS_004,
        "the returned amount 1.06 is more than the original 1.05",
    )
    assert error.path == "/Document/PmtRtr/TxInf[1]"


def test_a_wrong_total_returned_amount_is_refused():
    written = write_return(payment_return()).decode()
    _refused(
        read_return,
        written.replace(
            ">1000000000.59</TtlRtrdIntrBkSttlmAmt>", ">1000000000.58</TtlRtrdIntrBkSttlmAmt>"
        ),
        PACS_004,
        "TtlRtrdIntrBkSttlmAmt is 1000000000.58, but the amounts add up to 1000000000.59",
    )
    _refused(
        read_return,
        written.replace("<NbOfTxs>3</NbOfTxs>", "<NbOfTxs>4</NbOfTxs>"),
        PACS_004,
        "NbOfTxs is 4, but there are 3",
    )


def test_a_return_without_a_reason_or_with_two_is_refused():
    written = write_return(payment_return()).decode()
    start = written.index("<RtrRsnInf>")
    end = written.index("</RtrRsnInf>") + len("</RtrRsnInf>")
    _refused(read_return, written[:start] + written[end:], PACS_004, "not 0")
    twice = written[:end] + written[start:end] + written[end:]
    _refused(read_return, twice, PACS_004, "not 2")


def test_a_return_naming_no_original_message_is_refused():
    written = write_return(payment_return()).decode()
    start = written.index("<OrgnlGrpInf>")
    end = written.index("</OrgnlGrpInf>") + len("</OrgnlGrpInf>")
    _refused(read_return, written[:start] + written[end:], PACS_004, "OrgnlGrpInf is missing")


# --- every interbank reader ----------------------------------------------------------------------

READERS = [
    (read_transfers, PACS_008, lambda: write_transfers(transfers())),
    (read_status_report, PACS_002, lambda: write_status_report(status_report())),
    (read_return, PACS_004, lambda: write_return(payment_return())),
]


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_hostile_documents_are_refused(reader, message, writer):
    for hostile in (BILLION_LAUGHS, EXTERNAL_ENTITY):
        with pytest.raises(Iso20022Error) as caught:
            reader(hostile.replace(PAIN_001.name.encode(), message.name.encode()))
        assert "DOCTYPE is refused" in str(caught.value) or "amplification" in str(caught.value)
        assert "root:" not in str(caught.value)


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_another_message_type_is_refused_by_name(reader, message, writer):
    for _, other, other_writer in READERS:
        if other is message:
            continue
        with pytest.raises(Iso20022Error) as caught:
            reader(other_writer())
        assert f"is a {other.name} document, not {message.name}" in str(caught.value)


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_an_invalid_document_is_refused_with_the_validators_message(reader, message, writer):
    data = writer().replace(b"<MsgId>", b"<MsgIdent>", 1).replace(b"</MsgId>", b"</MsgIdent>", 1)
    error = _refused(reader, data, message, f"does not validate against {message.name}.xsd")
    assert error.path.endswith("/GrpHdr/MsgIdent")


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_a_truncated_document_is_refused(reader, message, writer):
    data = writer()
    _refused(reader, data[: len(data) // 2], message, "not well-formed XML")
