"""pain.001.001.09: the credit transfer initiation TX writes validates against the official XSD
(libxml2's validator and, independently, xmlschema's) and re-parses to the same instructions;
the reader refuses a document whose controls or values are wrong, naming where."""

import datetime

import pytest

from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import PAIN_001
from payments.iso20022.pain001 import (
    CreditTransferInitiation,
    PaymentInstruction,
    read_initiation,
    write_initiation,
)
from payments.iso20022.remittance import CreditorReference, Unstructured
from tests.payments.iso20022_helpers import (
    CREATED,
    DEBTOR_IBAN,
    independently_valid,
    initiation,
    transfer,
)


def test_written_initiation_validates_and_round_trips():
    made = initiation()
    data = write_initiation(made)
    independently_valid(data, PAIN_001)
    assert read_initiation(data) == made
    # What the writer computed: the counts and control sums of the group and of each block.
    text = data.decode()
    assert "<NbOfTxs>4</NbOfTxs>" in text
    assert "<CtrlSum>1000000006.14</CtrlSum>" in text
    assert "<CtrlSum>6.15</CtrlSum>" in text
    assert '<InstdAmt Ccy="EUR">999999999.99</InstdAmt>' in text
    assert "<LclInstrm>\n          <Cd>INST</Cd>" in text
    assert "<Othr>\n            <Id>NOTPROVIDED</Id>" in text  # the second block's debtor bank
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')


def test_ibans_are_kept_in_their_electronic_form():
    made = transfer(1, creditor_iban="fr14 2004 1010 0505 0001 3m02 606")
    assert made.creditor_iban == "FR1420041010050500013M02606"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"amount": 0}, "outside 0.01-999999999.99"),
        ({"amount": 100_000_000_000}, "outside 0.01-999999999.99"),
        ({"amount": 1.5}, "not a whole number of cents"),
        ({"currency": "USD"}, "not EUR"),
        ({"creditor_iban": "DE89370400440532013001"}, "not a valid IBAN"),
        ({"creditor_bic": "ABNA12AA"}, "not a valid BIC"),
        ({"end_to_end_id": "x" * 36}, "1-35 characters"),
        ({"end_to_end_id": "a//b"}, "nor hold '//'"),
        ({"end_to_end_id": "é"}, "SEPA set"),
        ({"creditor_name": " "}, "blank"),
        ({"creditor_name": "x" * 71}, "at most 70"),
        ({"creditor_name": "a\x00b"}, "control character"),
    ],
)
def test_a_transfer_tx_cannot_send_is_refused_when_made(changes, message):
    with pytest.raises(Iso20022Error) as caught:
        transfer(1, **changes)
    assert message in str(caught.value)


def test_remittance_rules():
    assert Unstructured("x" * 140).text == "x" * 140
    with pytest.raises(Iso20022Error, match="at most 140"):
        Unstructured("x" * 141)
    assert CreditorReference("RF18 5390 0754 7034").reference == "RF18539007547034"
    with pytest.raises(Iso20022Error, match="ISO 11649"):
        CreditorReference("RF19539007547034")


def test_times_are_written_with_their_offset():
    with pytest.raises(Iso20022Error, match="no time zone"):
        write_initiation(
            CreditTransferInitiation(
                message_id="M",
                created_at=datetime.datetime(2025, 1, 1),  # noqa: DTZ001 - the case refused
                initiating_party="A",
                payments=initiation().payments,
            )
        )


def test_a_payment_instruction_has_transfers():
    with pytest.raises(Iso20022Error, match="at least one transfer"):
        PaymentInstruction(
            payment_information_id="P",
            requested_execution_date=datetime.date(2025, 3, 4),
            debtor_name="A",
            debtor_iban=DEBTOR_IBAN,
            transfers=(),
        )


# --- the reader: rules the XSD cannot say --------------------------------------------------


def _written() -> str:
    return write_initiation(initiation()).decode()


def _refused(text: str, message: str) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        read_initiation(text.encode())
    assert caught.value.message_type == "pain.001.001.09"
    assert message in str(caught.value), str(caught.value)
    return caught.value


def test_a_wrong_group_count_is_refused_with_its_line_and_path():
    error = _refused(_written().replace("<NbOfTxs>4</NbOfTxs>", "<NbOfTxs>5</NbOfTxs>"), "")
    assert error.reason == "NbOfTxs is 5, but there are 4"
    assert error.path == "/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs"
    assert error.line == 7


def test_a_wrong_block_control_sum_is_refused():
    error = _refused(
        _written().replace("<CtrlSum>6.15</CtrlSum>", "<CtrlSum>6.16</CtrlSum>"),
        "CtrlSum is 6.16, but the amounts add up to 6.15",
    )
    assert error.path == "/Document/CstmrCdtTrfInitn/PmtInf[1]/CtrlSum"


def test_a_fraction_of_a_cent_is_refused():
    text = (
        _written()
        .replace('<InstdAmt Ccy="EUR">1.05</InstdAmt>', '<InstdAmt Ccy="EUR">1.055</InstdAmt>')
        .replace("<CtrlSum>6.15</CtrlSum>", "<CtrlSum>6.155</CtrlSum>")
        .replace("<CtrlSum>1000000006.14</CtrlSum>", "<CtrlSum>1000000006.145</CtrlSum>")
    )
    error = _refused(text, "1.055 holds a fraction of a cent")
    assert error.path == "/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]"


def test_a_wrong_iban_check_digit_is_refused():
    error = _refused(
        _written().replace(DEBTOR_IBAN, "DE89370400440532013001", 1), "not a valid IBAN"
    )
    assert error.path == "/Document/CstmrCdtTrfInitn/PmtInf[1]"


def test_another_currency_is_refused():
    _refused(_written().replace('Ccy="EUR">1.05', 'Ccy="USD">1.05'), "not EUR")


def test_unmodelled_elements_are_accepted_and_not_kept():
    text = _written().replace(
        "<Cdtr>\n          <Nm>Creditor 1</Nm>\n        </Cdtr>",
        "<Cdtr>\n          <Nm>Creditor 1</Nm>\n          <PstlAdr><Ctry>FR</Ctry></PstlAdr>"
        "\n        </Cdtr>",
    )
    assert read_initiation(text.encode()) == initiation()


def test_created_at_is_read_with_its_offset():
    assert read_initiation(_written().encode()).created_at == CREATED
