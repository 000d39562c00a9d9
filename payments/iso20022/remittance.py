"""Remittance information as SEPA carries it: one unstructured line of at most 140 characters
(`<Ustrd>`), or one structured creditor reference (`<Strd><CdtrRefInf>`, type SCOR, the
reference an ISO 11649 "RF" reference with its check digits). The EPC rulebooks allow one or the
other, once (SCT rulebook, AT-05 "The Remittance Information")."""

from __future__ import annotations

from dataclasses import dataclass

from payments.iso20022.document import Element, find, sub, text
from payments.iso20022.fields import check_creditor_reference, check_text

UNSTRUCTURED_LIMIT = 140


@dataclass(frozen=True, slots=True)
class Unstructured:
    text: str

    def __post_init__(self):
        check_text(self.text, UNSTRUCTURED_LIMIT, "unstructured remittance information")


@dataclass(frozen=True, slots=True)
class CreditorReference:
    reference: str

    def __post_init__(self):
        # Kept in its electronic form (no spaces), as the XSD's Max35Text carries it.
        object.__setattr__(self, "reference", check_creditor_reference(self.reference))


Remittance = Unstructured | CreditorReference


def write_remittance(parent: Element, remittance: Remittance | None) -> None:
    if remittance is None:
        return
    information = sub(parent, "RmtInf")
    if isinstance(remittance, Unstructured):
        sub(information, "Ustrd", remittance.text)
        return
    reference = sub(information, "Strd/CdtrRefInf")
    sub(reference, "Tp/CdOrPrtry/Cd", "SCOR")
    sub(reference, "Ref", remittance.reference)


def read_remittance(parent: Element) -> Remittance | None:
    """The remittance under `parent`: the first unstructured line, else the first structured
    creditor reference; None when there is neither (other structured content is not read)."""
    information = find(parent, "RmtInf")
    if information is None:
        return None
    line = text(information, "Ustrd")
    if line is not None:
        return Unstructured(line)
    reference = text(information, "Strd/CdtrRefInf/Ref")
    if reference is not None:
        return CreditorReference(reference)
    return None
