"""pain.008.001.08: the direct debit initiation TX writes validates against the official XSD
(libxml2's validator and, independently, xmlschema's) and re-parses to the same collections,
mandates and creditor identifier; the reader refuses a document whose controls, sequence type,
local instrument, mandate or creditor identifier are wrong, naming where."""

import datetime

import pytest

from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import PAIN_001, PAIN_008
from payments.iso20022.pain001 import read_initiation as read_credit_transfers
from payments.iso20022.pain008 import (
    CollectionInstruction,
    DirectDebit,
    DirectDebitInitiation,
    read_initiation,
    write_initiation,
)
from payments.iso20022.remittance import CreditorReference, Unstructured
from tests.payments.iso20022_helpers import (
    CREATED,
    CREDITOR_IBAN_FR,
    CREDITOR_IBAN_NL,
    DEBTOR_IBAN,
    RF_REFERENCE,
    independently_valid,
    initiation,
)
from tests.payments.test_iso20022_reader_safety import BILLION_LAUGHS, EXTERNAL_ENTITY

CREDITOR_ID = "DE98ZZZ09999999999"  # the Bundesbank's test creditor identifier
OTHER_CREDITOR_ID = "ES23ZZZ47690558N"


def debit(number: int, **changes) -> DirectDebit:
    values = {
        "end_to_end_id": f"DD-E2E-{number}",
        "amount": 1000 * number + 1,
        "mandate_id": f"MANDATE-{number}",
        "mandate_signed_on": datetime.date(2024, 11, number),
        "debtor_name": f"Debtor {number}",
        "debtor_iban": CREDITOR_IBAN_FR,
        "remittance": Unstructured(f"Subscription {number}"),
    }
    return DirectDebit(**(values | changes))


def collection() -> DirectDebitInitiation:
    """Two collection blocks: a Core first collection (two debits, with and without the debtor's
    BIC, structured and unstructured remittance) and a B2B one-off (no creditor BIC)."""
    return DirectDebitInitiation(
        message_id="TX-DD-0001",
        created_at=CREATED,
        initiating_party="Acme Payments GmbH",
        payments=(
            CollectionInstruction(
                payment_information_id="TX-DD-PMT-1",
                requested_collection_date=datetime.date(2025, 3, 10),
                local_instrument="CORE",
                sequence_type="FRST",
                creditor_name="Acme Payments GmbH",
                creditor_iban=DEBTOR_IBAN,
                creditor_bic="COBADEFFXXX",
                creditor_id=CREDITOR_ID,
                debits=(
                    debit(1),
                    debit(
                        2,
                        debtor_iban=CREDITOR_IBAN_NL,
                        debtor_bic="ABNANL2A",
                        remittance=CreditorReference(RF_REFERENCE),
                    ),
                ),
            ),
            CollectionInstruction(
                payment_information_id="TX-DD-PMT-2",
                requested_collection_date=datetime.date(2025, 3, 11),
                local_instrument="B2B",
                sequence_type="OOFF",
                creditor_name="Acme Payments GmbH",
                creditor_iban=DEBTOR_IBAN,
                creditor_id=CREDITOR_ID,
                debits=(debit(3, remittance=None, amount=99_999_999_999),),
            ),
        ),
    )


def test_written_initiation_validates_and_round_trips():
    made = collection()
    data = write_initiation(made)
    independently_valid(data, PAIN_008)
    assert read_initiation(data) == made
    text = data.decode()
    assert "<NbOfTxs>3</NbOfTxs>" in text
    assert "<CtrlSum>1000000030.01</CtrlSum>" in text  # 10.01 + 20.01 + 999999999.99
    assert "<CtrlSum>30.02</CtrlSum>" in text
    assert "<SeqTp>FRST</SeqTp>" in text and "<SeqTp>OOFF</SeqTp>" in text
    assert "<Cd>CORE</Cd>" in text and "<Cd>B2B</Cd>" in text
    assert "<MndtId>MANDATE-1</MndtId>" in text and "<DtOfSgntr>2024-11-01</DtOfSgntr>" in text
    assert f"<Id>{CREDITOR_ID}</Id>" in text and "<Prtry>SEPA</Prtry>" in text
    assert "<ReqdColltnDt>2025-03-10</ReqdColltnDt>" in text


@pytest.mark.parametrize("sequence", ["FRST", "RCUR", "OOFF", "FNAL"])
def test_every_sepa_sequence_type_round_trips(sequence):
    made = collection()
    block = made.payments[0]
    made = DirectDebitInitiation(
        message_id=made.message_id,
        created_at=made.created_at,
        initiating_party=made.initiating_party,
        payments=(_replace(block, sequence_type=sequence),),
    )
    assert read_initiation(write_initiation(made)) == made


def _replace(block: CollectionInstruction, **changes) -> CollectionInstruction:
    values = {name: getattr(block, name) for name in block.__dataclass_fields__}
    return CollectionInstruction(**(values | changes))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sequence_type": "RPRE"}, "not one of SEPA's"),
        ({"local_instrument": "COR1"}, "not a SEPA direct debit's"),
        ({"creditor_id": "DE97ZZZ09999999999"}, "not a SEPA creditor identifier"),
        ({"creditor_iban": "DE89370400440532013001"}, "not a valid IBAN"),
        ({"debits": ()}, "at least one direct debit"),
    ],
)
def test_a_collection_tx_cannot_send_is_refused_when_made(changes, message):
    with pytest.raises(Iso20022Error, match=message):
        _replace(collection().payments[0], **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"mandate_id": " "}, "blank"),
        ({"mandate_id": "M" * 36}, "at most 35"),
        ({"amount": 0}, "outside 0.01-999999999.99"),
        ({"currency": "CHF"}, "not EUR"),
        ({"debtor_bic": "ABNA12AA"}, "not a valid BIC"),
    ],
)
def test_a_debit_tx_cannot_send_is_refused_when_made(changes, message):
    with pytest.raises(Iso20022Error, match=message):
        debit(1, **changes)


def test_the_creditor_identifier_is_kept_in_its_electronic_form():
    block = _replace(collection().payments[0], creditor_id="de98 zzz 09999999999")
    assert block.creditor_id == CREDITOR_ID


# --- the reader ----------------------------------------------------------------------------------


def _written() -> str:
    return write_initiation(collection()).decode()


def _refused(text: str | bytes, message: str) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        read_initiation(text.encode() if isinstance(text, str) else text)
    assert caught.value.message_type == "pain.008.001.08"
    assert message in str(caught.value), str(caught.value)
    return caught.value


def test_a_wrong_group_count_is_refused():
    error = _refused(_written().replace("<NbOfTxs>3</NbOfTxs>", "<NbOfTxs>2</NbOfTxs>"), "")
    assert error.reason == "NbOfTxs is 2, but there are 3"
    assert error.path == "/Document/CstmrDrctDbtInitn/GrpHdr/NbOfTxs"


def test_a_wrong_block_control_sum_is_refused():
    error = _refused(
        _written().replace("<CtrlSum>30.02</CtrlSum>", "<CtrlSum>30.03</CtrlSum>"),
        "CtrlSum is 30.03, but the amounts add up to 30.02",
    )
    assert error.path == "/Document/CstmrDrctDbtInitn/PmtInf[1]/CtrlSum"


def test_a_wrong_group_control_sum_is_refused():
    _refused(
        _written().replace("<CtrlSum>1000000030.01</CtrlSum>", "<CtrlSum>1000000030.00</CtrlSum>"),
        "but the amounts add up to 1000000030.01",
    )


def test_a_sequence_type_outside_sepa_is_refused():
    error = _refused(
        _written().replace("<SeqTp>FRST</SeqTp>", "<SeqTp>RPRE</SeqTp>"), "not one of SEPA's"
    )
    assert error.path == "/Document/CstmrDrctDbtInitn/PmtInf[1]/PmtTpInf"


def test_a_local_instrument_outside_sepa_is_refused():
    _refused(_written().replace("<Cd>CORE</Cd>", "<Cd>COR1</Cd>"), "not a SEPA direct debit's")


def test_a_missing_sequence_type_is_refused():
    _refused(_written().replace("<SeqTp>FRST</SeqTp>", ""), "SeqTp is missing")


def test_a_creditor_identifier_with_wrong_check_digits_is_refused():
    error = _refused(
        _written().replace(CREDITOR_ID, "DE97ZZZ09999999999", 1), "not a SEPA creditor identifier"
    )
    assert error.path == "/Document/CstmrDrctDbtInitn/PmtInf[1]/CdtrSchmeId"


def test_a_creditor_identifier_given_per_transaction_is_read():
    text = _written()
    scheme = (
        "<CdtrSchmeId><Id><PrvtId><Othr><Id>" + CREDITOR_ID + "</Id><SchmeNm><Prtry>SEPA</Prtry>"
        "</SchmeNm></Othr></PrvtId></Id></CdtrSchmeId>"
    )
    block_scheme = text[text.index("<CdtrSchmeId>") : text.index("</CdtrSchmeId>") + 14]
    # The first block's id moved into each of its transactions' DrctDbtTx.
    first, rest = text.split("<PmtInfId>TX-DD-PMT-2", 1)
    first = first.replace(block_scheme, "", 1).replace("</MndtRltdInf>", "</MndtRltdInf>" + scheme)
    assert read_initiation((first + "<PmtInfId>TX-DD-PMT-2" + rest).encode()) == collection()
    # ... and one transaction stating another creditor's id is refused.
    other = first.replace(CREDITOR_ID, OTHER_CREDITOR_ID, 1)
    _refused(other + "<PmtInfId>TX-DD-PMT-2" + rest, "is not the block's")


def test_a_missing_mandate_signature_date_is_refused():
    error = _refused(
        _written().replace("<DtOfSgntr>2024-11-01</DtOfSgntr>", ""), "DtOfSgntr is missing"
    )
    assert error.path == (
        "/Document/CstmrDrctDbtInitn/PmtInf[1]/DrctDbtTxInf[1]/DrctDbtTx/MndtRltdInf"
    )


def test_a_missing_mandate_is_refused():
    text = _written()
    start = text.index("<DrctDbtTx>")
    end = text.index("</DrctDbtTx>") + len("</DrctDbtTx>")
    _refused(text[:start] + text[end:], "SEPA collects on a mandate")


def test_a_transfer_method_is_refused_by_the_xsd():
    _refused(
        _written().replace("<PmtMtd>DD</PmtMtd>", "<PmtMtd>TRF</PmtMtd>", 1),
        "The value 'TRF' is not an element of the set {'DD'}",
    )


def test_another_currency_is_refused():
    _refused(_written().replace('Ccy="EUR">10.01', 'Ccy="USD">10.01'), "not EUR")


def test_an_invalid_document_is_refused_with_the_validators_message():
    error = _refused(
        _written().replace("<ReqdColltnDt>2025-03-10</ReqdColltnDt>", ""),
        "does not validate against pain.008.001.08.xsd",
    )
    assert "ReqdColltnDt" in error.reason


def test_hostile_documents_are_refused():
    for hostile in (BILLION_LAUGHS, EXTERNAL_ENTITY):
        with pytest.raises(Iso20022Error) as caught:
            read_initiation(hostile.replace(PAIN_001.name.encode(), PAIN_008.name.encode()))
        assert "DOCTYPE is refused" in str(caught.value) or "amplification" in str(caught.value)
        assert "root:" not in str(caught.value)


def test_a_credit_transfer_initiation_is_not_a_direct_debit_initiation():
    from payments.iso20022.pain001 import write_initiation as write_credit_transfers

    with pytest.raises(Iso20022Error, match="is a pain.001.001.09 document, not pain.008"):
        read_initiation(write_credit_transfers(initiation()))
    with pytest.raises(Iso20022Error, match="is a pain.008.001.08 document, not pain.001"):
        read_credit_transfers(write_initiation(collection()))
