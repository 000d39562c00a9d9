"""pacs.003.001.08, direct debits between banks: what TX writes validates against the official
XSD, independently too, and re-parses to the same collections; the reader refuses hostile
documents, another message type, totals that do not add up, and a collection without its
mandate, SEPA type or creditor identifier."""

import datetime

import pytest

from payments.iso20022.errors import Iso20022Error
from payments.iso20022.mandates import Amendment
from payments.iso20022.messages import PACS_003, PACS_008, PAIN_001, PAIN_008
from payments.iso20022.pacs003 import (
    FIToFIDirectDebit,
    InterbankDirectDebit,
    read_debits,
    write_debits,
)
from payments.iso20022.pacs008 import read_transfers
from payments.iso20022.pain008 import read_initiation
from payments.iso20022.remittance import CreditorReference, Unstructured
from tests.payments.iso20022_helpers import (
    CREDITOR_IBAN_FR,
    CREDITOR_IBAN_NL,
    DEBTOR_IBAN,
    RF_REFERENCE,
    independently_valid,
)
from tests.payments.test_iso20022_interbank import PEER_BANK, TX_BANK, header
from tests.payments.test_iso20022_reader_safety import BILLION_LAUGHS, EXTERNAL_ENTITY

CREDITOR_ID = "DE98ZZZ09999999999"


def debit(number: int, **changes) -> InterbankDirectDebit:
    values = {
        "instruction_id": f"INSTR-{number}",
        "end_to_end_id": f"DD-E2E-{number}",
        "transaction_id": f"TX-DD-TXN-{number}",
        "amount": 1000 * number + 1,
        "local_instrument": "CORE",
        "sequence_type": "RCUR",
        "mandate_id": f"MANDATE-{number}",
        "mandate_signed_on": datetime.date(2024, 11, number),
        "creditor_id": CREDITOR_ID,
        "creditor_name": "Acme Payments GmbH",
        "creditor_iban": DEBTOR_IBAN,
        "creditor_bic": TX_BANK,
        "debtor_name": f"Debtor {number}",
        "debtor_iban": CREDITOR_IBAN_NL,
        "debtor_bic": PEER_BANK,
        "remittance": Unstructured(f"Subscription {number}"),
    }
    return InterbankDirectDebit(**(values | changes))


def debits() -> FIToFIDirectDebit:
    return FIToFIDirectDebit(
        header=header("TX-IBDD-0001"),
        debits=(
            debit(1, sequence_type="FRST"),
            debit(
                2,
                remittance=CreditorReference(RF_REFERENCE),
                instruction_id=None,
                amendment=Amendment(
                    original_mandate_id="MANDATE-OLD", original_debtor_iban=CREDITOR_IBAN_FR
                ),
            ),
            debit(
                3,
                local_instrument="B2B",
                sequence_type="OOFF",
                remittance=None,
                debtor_iban=CREDITOR_IBAN_FR,
                debtor_bic="BNPAFRPPXXX",
            ),
            debit(4, sequence_type="FNAL", amount=99_999_999_999),
        ),
    )


def _written() -> str:
    return write_debits(debits()).decode()


def _refused(data: str | bytes, expected: str) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        read_debits(data.encode() if isinstance(data, str) else data)
    assert caught.value.message_type == PACS_003.name
    assert expected in str(caught.value), str(caught.value)
    return caught.value


def test_written_debits_validate_and_round_trip():
    made = debits()
    data = write_debits(made)
    independently_valid(data, PACS_003)
    assert read_debits(data) == made
    text = data.decode()
    assert '<TtlIntrBkSttlmAmt Ccy="EUR">1000000060.02</TtlIntrBkSttlmAmt>' in text
    assert text.count(f"<Id>{CREDITOR_ID}</Id>") == 4  # in every transaction's DrctDbtTx
    assert text.count("<AmdmntInd>true</AmdmntInd>") == 1  # the amended mandate's, read back


def test_totals_that_do_not_add_up_are_refused():
    _refused(
        _written().replace(
            ">1000000060.02</TtlIntrBkSttlmAmt>", ">1000000060.03</TtlIntrBkSttlmAmt>"
        ),
        "TtlIntrBkSttlmAmt is 1000000060.03, but the amounts add up to 1000000060.02",
    )
    _refused(_written().replace("<NbOfTxs>4</NbOfTxs>", "<NbOfTxs>5</NbOfTxs>"), "NbOfTxs is 5")


def test_a_collection_without_its_creditor_identifier_is_refused():
    text = _written()
    start = text.index("<CdtrSchmeId>")
    end = text.index("</CdtrSchmeId>") + len("</CdtrSchmeId>")
    error = _refused(text[:start] + text[end:], "CdtrSchmeId is missing")
    assert error.path == "/Document/FIToFICstmrDrctDbt/DrctDbtTxInf[1]/DrctDbtTx"


def test_a_creditor_identifier_with_wrong_check_digits_is_refused():
    _refused(_written().replace(CREDITOR_ID, "DE97ZZZ09999999999", 1), "not a SEPA creditor")


def test_a_sequence_type_outside_sepa_is_refused():
    _refused(_written().replace("<SeqTp>FRST</SeqTp>", "<SeqTp>RPRE</SeqTp>"), "not one of SEPA's")


def test_a_collection_without_its_mandate_is_refused():
    text = _written()
    start = text.index("<MndtRltdInf>")
    end = text.index("</MndtRltdInf>") + len("</MndtRltdInf>")
    _refused(text[:start] + text[end:], "SEPA collects on a mandate")


def test_a_bank_without_its_bic_is_refused():
    text = _written().replace(
        f"<DbtrAgt>\n        <FinInstnId>\n          <BICFI>{PEER_BANK}</BICFI>",
        "<DbtrAgt>\n        <FinInstnId>\n          <Othr><Id>NOTPROVIDED</Id></Othr>",
        1,
    )
    _refused(text, "DbtrAgt is not identified by a BIC")


def test_hostile_documents_are_refused():
    for hostile in (BILLION_LAUGHS, EXTERNAL_ENTITY):
        with pytest.raises(Iso20022Error) as caught:
            read_debits(hostile.replace(PAIN_001.name.encode(), PACS_003.name.encode()))
        assert "DOCTYPE is refused" in str(caught.value) or "amplification" in str(caught.value)


def test_another_message_type_is_refused_by_name():
    data = write_debits(debits())
    with pytest.raises(Iso20022Error, match=f"is a {PACS_003.name} document, not {PACS_008.name}"):
        read_transfers(data)
    with pytest.raises(Iso20022Error, match=f"is a {PACS_003.name} document, not {PAIN_008.name}"):
        read_initiation(data)


def test_an_invalid_document_is_refused_with_the_validators_message():
    error = _refused(
        _written().replace("<ChrgBr>SLEV</ChrgBr>", "<ChrgBr>XXXX</ChrgBr>", 1),
        "does not validate against pacs.003.001.08.xsd",
    )
    assert error.path == "/Document/FIToFICstmrDrctDbt/DrctDbtTxInf[1]/ChrgBr"
