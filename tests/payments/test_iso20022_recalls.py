"""Recalls between banks: camt.056.001.08 (the recall, an FI to FI payment cancellation request)
and camt.029.001.09 (its answer, a resolution of investigation). What TX writes validates
against the official XSD, independently too, and re-parses to the same message; the readers
refuse hostile documents, another message type, invalid documents with the validator's message,
counts and sums that do not add up and answers that name no original; a reason outside the
EPC's list is read as `unknown`, not refused."""

import datetime

import pytest

from payments.iso20022 import codes
from payments.iso20022.camt029 import (
    RecallAnswer,
    ResolutionOfInvestigation,
    read_resolution,
    write_resolution,
)
from payments.iso20022.camt056 import (
    CancellationRequest,
    RecalledTransaction,
    read_cancellation_request,
    write_cancellation_request,
)
from payments.iso20022.cases import Assignment
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import CAMT_029, CAMT_056, PACS_004, PAIN_001
from payments.iso20022.pacs004 import read_return, write_return
from payments.iso20022.status_reasons import StatusReason
from tests.payments.iso20022_helpers import CREATED, independently_valid
from tests.payments.test_iso20022_interbank import PEER_BANK, SETTLED, TX_BANK, payment_return
from tests.payments.test_iso20022_reader_safety import BILLION_LAUGHS, EXTERNAL_ENTITY


def recalled(number: int, code: str = "DUPL", **changes) -> RecalledTransaction:
    values = {
        "cancellation_id": f"TX-CXL-{number}",
        "original_message_id": "TX-IB-0001",
        "original_message_type": "pacs.008.001.08",
        "original_end_to_end_id": f"E2E-{number}",
        "original_transaction_id": f"TX-TXN-{number}",
        "original_amount": 100 * number + 5,
        "original_settlement_date": SETTLED,
        "reason": StatusReason(code, originator_bic=TX_BANK),
    }
    return RecalledTransaction(**(values | changes))


def recall() -> CancellationRequest:
    """TX recalls three transfers of its pacs.008: a duplicate, a fraud with a word of
    explanation, and one for a reason outside the EPC's list."""
    return CancellationRequest(
        assignment=Assignment(
            id="TX-RCL-0001",
            assigner_bic=TX_BANK,
            assignee_bic=PEER_BANK,
            created_at=CREATED + datetime.timedelta(days=3),
        ),
        transactions=(
            recalled(1, original_instruction_id="INSTR-1"),
            recalled(
                2,
                reason=StatusReason(
                    "FRAD", additional_information=("Card details phished",), originator_bic=None
                ),
            ),
            recalled(4, "AM05", original_amount=99_999_999_999),
        ),
    )


def answer(status: str = "RJCR", **changes) -> ResolutionOfInvestigation:
    """The peer bank's answer to `recall()`: refused for the first (the money is gone, AM04)
    and the second (the beneficiary refuses, with a word), or accepted for both."""
    refused = status == "RJCR"
    values = {
        "assignment": Assignment(
            id="PEER-RSL-0001",
            assigner_bic=PEER_BANK,
            assignee_bic=TX_BANK,
            created_at=CREATED + datetime.timedelta(days=5),
        ),
        "status": status,
        "recall_case_id": "TX-RCL-0001",
        "transactions": (
            RecallAnswer(
                status_id="PEER-STS-1",
                original_message_id="TX-IB-0001",
                original_message_type="pacs.008.001.08",
                original_instruction_id="INSTR-1",
                original_end_to_end_id="E2E-1",
                original_transaction_id="TX-TXN-1",
                original_amount=105,
                original_settlement_date=SETTLED,
                reason=StatusReason("AM04", originator_bic=PEER_BANK) if refused else None,
            ),
            RecallAnswer(
                status_id="PEER-STS-2",
                original_message_id="TX-IB-0001",
                original_message_type="pacs.008.001.08",
                original_end_to_end_id="E2E-2",
                original_transaction_id="TX-TXN-2",
                original_amount=205,
                original_settlement_date=SETTLED,
                reason=StatusReason("CUST", additional_information=("Beneficiary refuses",))
                if refused
                else None,
            ),
        ),
    }
    return ResolutionOfInvestigation(**(values | changes))


def _refused(reader, data: str | bytes, message_type, expected: str) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        reader(data.encode() if isinstance(data, str) else data)
    assert caught.value.message_type == message_type.name
    assert expected in str(caught.value), str(caught.value)
    return caught.value


def _without(written: str, tag: str, occurrence: int = 0) -> str:
    start = -1
    for _ in range(occurrence + 1):
        start = written.index(f"<{tag}", start + 1)
    end = written.index(f"</{tag}>", start) + len(f"</{tag}>")
    return written[:start] + written[end:]


# --- camt.056 ------------------------------------------------------------------------------------


def test_written_recall_validates_and_round_trips():
    made = recall()
    data = write_cancellation_request(made)
    independently_valid(data, CAMT_056)
    assert read_cancellation_request(data) == made
    text = data.decode()
    assert "<Assgnr>\n        <Agt>\n          <FinInstnId>\n            <BICFI>COBADEFFXXX" in text
    assert "<NbOfTxs>3</NbOfTxs>" in text
    assert "<CtrlSum>1000000003.09</CtrlSum>" in text
    assert '<OrgnlIntrBkSttlmAmt Ccy="EUR">1.05</OrgnlIntrBkSttlmAmt>' in text
    assert "<OrgnlIntrBkSttlmDt>2025-03-04</OrgnlIntrBkSttlmDt>" in text
    assert "<AddtlInf>Card details phished</AddtlInf>" in text


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("DUPL", "duplicate_entry"),
        ("TECH", "technical_problem"),
        ("FRAD", "fraud"),
        ("CUST", "requested_by_customer"),
        ("AC03", "no_account"),
        ("AM09", "wrong_amount"),
        ("AM05", "unknown"),  # a known code, but not a recall's reason in the EPC's list
        ("ZZ99", "unknown"),
    ],
)
def test_recall_reasons_are_kept_raw_beside_their_normalized_name(code, name):
    made = CancellationRequest(assignment=recall().assignment, transactions=(recalled(1, code),))
    read = read_cancellation_request(write_cancellation_request(made)).transactions[0]
    assert read.reason.code == code
    assert read.reason_name == name
    assert codes.recall_reason(code).normalized == name


def test_a_proprietary_recall_reason_is_read_as_unknown():
    written = write_cancellation_request(recall()).decode()
    data = written.replace("<Cd>DUPL</Cd>", "<Prtry>OUR-OWN</Prtry>")
    transaction = read_cancellation_request(data.encode()).transactions[0]
    assert (transaction.reason.code, transaction.reason_name) == ("OUR-OWN", "unknown")


def test_a_wrong_count_or_control_sum_is_refused():
    written = write_cancellation_request(recall()).decode()
    error = _refused(
        read_cancellation_request,
        written.replace("<NbOfTxs>3</NbOfTxs>", "<NbOfTxs>2</NbOfTxs>"),
        CAMT_056,
        "NbOfTxs is 2, but there are 3",
    )
    assert error.path == "/Document/FIToFIPmtCxlReq/CtrlData/NbOfTxs"
    _refused(
        read_cancellation_request,
        written.replace("<CtrlSum>1000000003.09<", "<CtrlSum>1000000003.10<"),
        CAMT_056,
        "CtrlSum is 1000000003.10, but the amounts add up to 1000000003.09",
    )


def test_a_recall_without_a_reason_or_with_two_is_refused():
    written = write_cancellation_request(recall()).decode()
    _refused(read_cancellation_request, _without(written, "CxlRsnInf"), CAMT_056, "not 0")
    start = written.index("<CxlRsnInf>")
    end = written.index("</CxlRsnInf>") + len("</CxlRsnInf>")
    twice = written[:end] + written[start:end] + written[end:]
    _refused(read_cancellation_request, twice, CAMT_056, "not 2")


def test_a_recall_naming_no_original_is_refused():
    written = write_cancellation_request(recall()).decode()
    _refused(
        read_cancellation_request,
        _without(written, "OrgnlGrpInf"),
        CAMT_056,
        "OrgnlGrpInf is missing (which message is recalled?)",
    )
    error = _refused(
        read_cancellation_request,
        _without(written, "OrgnlEndToEndId"),
        CAMT_056,
        "OrgnlEndToEndId is missing",
    )
    assert error.path == "/Document/FIToFIPmtCxlReq/Undrlyg/TxInf[1]"


def test_a_cancellation_of_a_whole_message_is_refused():
    written = write_cancellation_request(recall()).decode()
    start = written.index("<TxInf>")
    end = written.rindex("</TxInf>") + len("</TxInf>")
    _refused(
        read_cancellation_request,
        written[:start] + written[end:],
        CAMT_056,
        "a cancellation of a whole message is not SEPA's",
    )


def test_a_recall_in_another_currency_is_refused():
    written = write_cancellation_request(recall()).decode()
    _refused(
        read_cancellation_request,
        written.replace('Ccy="EUR">1.05<', 'Ccy="USD">1.05<'),
        CAMT_056,
        "'USD' is not EUR",
    )


def test_an_assigner_not_named_by_its_bic_is_refused():
    written = write_cancellation_request(recall()).decode()
    start = written.index("<Assgnr>")
    end = written.index("</Assgnr>") + len("</Assgnr>")
    party = "<Assgnr><Pty><Nm>Acme Payments GmbH</Nm></Pty></Assgnr>"
    error = _refused(
        read_cancellation_request,
        written[:start] + party + written[end:],
        CAMT_056,
        "Assgnr is not a bank (Agt)",
    )
    assert error.path == "/Document/FIToFIPmtCxlReq/Assgnmt/Assgnr"


# --- camt.029 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["RJCR", "CNCL"])
def test_written_answer_validates_and_round_trips(status):
    made = answer(status)
    data = write_resolution(made)
    independently_valid(data, CAMT_029)
    assert read_resolution(data) == made
    text = data.decode()
    assert f"<Conf>{status}</Conf>" in text
    assert text.count(f"<TxCxlSts>{'RJCR' if status == 'RJCR' else 'ACCR'}</TxCxlSts>") == 2
    assert "<RslvdCase>\n      <Id>TX-RCL-0001</Id>" in text


def test_a_refused_recall_names_its_reason_and_an_accepted_one_implies_a_return():
    refused = read_resolution(write_resolution(answer("RJCR")))
    assert not refused.accepted
    assert [each.reason_name for each in refused.transactions] == [
        "insufficient_funds",
        "requested_by_customer",
    ]
    accepted = read_resolution(write_resolution(answer("CNCL")))
    assert accepted.accepted
    assert [each.reason for each in accepted.transactions] == [None, None]
    # The money of an accepted recall comes back in a pacs.004 with the reason FOCR.
    assert codes.reason("FOCR").normalized == "recalled"
    assert read_return(_focr_return()).transactions[0].reason.normalized == "recalled"


def _focr_return() -> bytes:
    return write_return(payment_return()).replace(b"<Cd>AC04</Cd>", b"<Cd>FOCR</Cd>")


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("LEGL", "legal_decision"),
        ("CUST", "requested_by_customer"),
        ("AC04", "account_closed"),
        ("AM04", "insufficient_funds"),
        ("NOAS", "no_answer"),
        ("NOOR", "original_not_received"),
        ("ARDT", "already_returned"),
        ("DUPL", "unknown"),  # a recall's reason, not a refusal's in the EPC's list
        ("ZZ99", "unknown"),
    ],
)
def test_refusal_reasons_are_kept_raw_beside_their_normalized_name(code, name):
    data = write_resolution(answer("RJCR")).replace(b"<Cd>AM04</Cd>", f"<Cd>{code}</Cd>".encode())
    first = read_resolution(data).transactions[0]
    assert (first.reason.code, first.reason_name) == (code, name)


def test_an_answer_naming_no_original_is_refused():
    written = write_resolution(answer()).decode()
    start = written.index("<CxlDtls>")
    end = written.index("</CxlDtls>") + len("</CxlDtls>")
    error = _refused(
        read_resolution,
        written[:start] + written[end:],
        CAMT_029,
        "names no original transaction (CxlDtls/TxInfAndSts): which recall does it answer?",
    )
    assert error.path == "/Document/RsltnOfInvstgtn"
    _refused(
        read_resolution,
        _without(written, "OrgnlGrpInf"),
        CAMT_029,
        "OrgnlGrpInf is missing (which message was recalled?)",
    )
    _refused(read_resolution, _without(written, "OrgnlTxId"), CAMT_029, "OrgnlTxId is missing")


def test_a_transaction_status_disagreeing_with_the_answer_is_refused():
    written = write_resolution(answer("RJCR")).decode()
    error = _refused(
        read_resolution,
        written.replace("<TxCxlSts>RJCR</TxCxlSts>", "<TxCxlSts>ACCR</TxCxlSts>", 1),
        CAMT_029,
        "TxCxlSts is ACCR, but the answer is RJCR (RJCR)",
    )
    assert error.path.endswith("/CxlDtls/TxInfAndSts[1]/TxCxlSts")


def test_an_answer_other_than_accepted_or_refused_is_refused():
    written = write_resolution(answer("RJCR")).decode()
    _refused(
        read_resolution,
        written.replace("<Conf>RJCR</Conf>", "<Conf>PDCR</Conf>"),
        CAMT_029,
        "Sts is PDCR: TX reads the answer to a recall, CNCL or RJCR",
    )


def test_a_refusal_without_its_reason_and_an_acceptance_with_one_are_refused():
    refused = write_resolution(answer("RJCR")).decode()
    _refused(
        read_resolution,
        _without(refused, "CxlStsRsnInf"),
        CAMT_029,
        "E2E-1: a refused recall gives its reason",
    )
    accepted = write_resolution(answer("CNCL")).decode()
    reason = "<CxlStsRsnInf><Rsn><Cd>LEGL</Cd></Rsn></CxlStsRsnInf>"
    _refused(
        read_resolution,
        accepted.replace("<OrgnlIntrBkSttlmAmt", reason + "<OrgnlIntrBkSttlmAmt", 1),
        CAMT_029,
        "E2E-1: an accepted recall gives no refusal reason (LEGL)",
    )


def test_a_model_refuses_a_status_outside_the_answers_to_a_recall():
    with pytest.raises(Iso20022Error, match="CNCL \\(accepted\\) or RJCR \\(refused\\)"):
        answer("ACCR")


# --- both readers --------------------------------------------------------------------------------

READERS = [
    (read_cancellation_request, CAMT_056, lambda: write_cancellation_request(recall())),
    (read_resolution, CAMT_029, lambda: write_resolution(answer())),
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
    others = [(other, other_writer) for _, other, other_writer in READERS if other is not message]
    others.append((PACS_004, lambda: write_return(payment_return())))
    for other, other_writer in others:
        with pytest.raises(Iso20022Error) as caught:
            reader(other_writer())
        assert f"is a {other.name} document, not {message.name}" in str(caught.value)


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_an_invalid_document_is_refused_with_the_validators_message(reader, message, writer):
    data = writer().replace(b"<CreDtTm>", b"<CreationTime>", 1)
    data = data.replace(b"</CreDtTm>", b"</CreationTime>", 1)
    error = _refused(reader, data, message, f"does not validate against {message.name}.xsd")
    assert "CreationTime" in error.reason
    assert error.path.endswith("/Assgnmt/CreationTime")


@pytest.mark.parametrize(("reader", "message", "writer"), READERS)
def test_a_truncated_document_is_refused(reader, message, writer):
    data = writer()
    _refused(reader, data[: len(data) // 2], message, "not well-formed XML")
