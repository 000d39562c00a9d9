"""What TX's SEPA messages say of an order and of the institution (the cut-off's pain.001 and
an instant payment's alike): a credit transfer of an order, and a party's name as ISO 20022 takes
it."""

from ..iso20022 import pain001
from ..iso20022.remittance import CreditorReference, Unstructured
from ..models import PaymentOrder


def remittance_of(order: PaymentOrder) -> CreditorReference | Unstructured | None:
    """The order's remittance: its structured creditor reference, or its free text, or none."""
    if order.creditor_reference:
        return CreditorReference(order.creditor_reference)
    if order.remittance_info:
        return Unstructured(order.remittance_info)
    return None


def credit_transfer(order: PaymentOrder) -> pain001.CreditTransfer:
    """The order as a pain.001 credit transfer."""
    external = order.external_account
    return pain001.CreditTransfer(
        end_to_end_id=order.end_to_end_id,
        amount=order.amount,
        creditor_name=party_name(external.holder_name),
        creditor_iban=external.sepa_iban(),
        creditor_bic=external.sepa_bic or None,
        remittance=remittance_of(order),
    )


def party_name(text: str) -> str:
    """A name as a pain.001 takes it (at most its length; the SEPA character set was checked
    when the name was stored)."""
    return text.strip()[: pain001.NAME_LIMIT]
