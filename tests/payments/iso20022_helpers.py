"""Messages built in code for the ISO 20022 tests, and a second, independent XSD validator."""

import datetime

import xmlschema

from payments.iso20022.messages import MessageType
from payments.iso20022.pain001 import CreditTransfer, CreditTransferInitiation, PaymentInstruction
from payments.iso20022.remittance import CreditorReference, Unstructured

CREATED = datetime.datetime(2025, 3, 3, 9, 15, 30, tzinfo=datetime.UTC)
DEBTOR_IBAN = "DE89370400440532013000"
CREDITOR_IBAN_FR = "FR1420041010050500013M02606"
CREDITOR_IBAN_NL = "NL91ABNA0417164300"
RF_REFERENCE = "RF18539007547034"

_XMLSCHEMAS: dict[str, xmlschema.XMLSchema] = {}


def independently_valid(data: bytes, message: MessageType) -> None:
    """Validates `data` with xmlschema (pure Python), not libxml2: TX's files must satisfy an
    XSD validator other than the one TX reads them with."""
    if message.name not in _XMLSCHEMAS:
        _XMLSCHEMAS[message.name] = xmlschema.XMLSchema(str(message.xsd))
    _XMLSCHEMAS[message.name].validate(data.decode("utf-8"))


def transfer(number: int, **changes) -> CreditTransfer:
    values = {
        "end_to_end_id": f"E2E-{number}",
        "amount": 100 * number + 5,
        "creditor_name": f"Creditor {number}",
        "creditor_iban": CREDITOR_IBAN_FR,
        "remittance": Unstructured(f"Invoice {number}"),
    }
    return CreditTransfer(**(values | changes))


def initiation() -> CreditTransferInitiation:
    """Two payment instructions (two execution dates; the second SEPA Instant), transfers with
    and without a creditor BIC, unstructured and structured remittance, and none."""
    return CreditTransferInitiation(
        message_id="TX-MSG-0001",
        created_at=CREATED,
        initiating_party="Acme Payments GmbH",
        payments=(
            PaymentInstruction(
                payment_information_id="TX-PMT-0001",
                requested_execution_date=datetime.date(2025, 3, 4),
                debtor_name="Acme Payments GmbH",
                debtor_iban=DEBTOR_IBAN,
                debtor_bic="COBADEFFXXX",
                transfers=(
                    transfer(1),
                    transfer(
                        2,
                        creditor_iban=CREDITOR_IBAN_NL,
                        creditor_bic="ABNANL2A",
                        remittance=CreditorReference(RF_REFERENCE),
                    ),
                    transfer(3, remittance=None, creditor_name="Zoë Müller-Lüdenscheidt"),
                ),
            ),
            PaymentInstruction(
                payment_information_id="TX-PMT-0002",
                requested_execution_date=datetime.date(2025, 3, 5),
                debtor_name="Acme Payments GmbH",
                debtor_iban=DEBTOR_IBAN,
                instant=True,
                transfers=(transfer(4, amount=99_999_999_999),),
            ),
        ),
    )
