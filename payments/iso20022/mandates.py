"""What a SEPA direct debit carries of its mandate, shared by pain.008 (the creditor to its bank)
and pacs.003 (between banks): the mandate's reference and signature date
(`DrctDbtTx/MndtRltdInf/MndtId`, `DtOfSgntr`), the sequence type and local instrument of the
payment type (`SeqTp` FRST/RCUR/OOFF/FNAL, `LclInstrm/Cd` CORE or B2B), and the creditor's
SEPA identifier (`CdtrSchmeId/Id/PrvtId/Othr/Id` with scheme name `SEPA`).

Sources: the EPC's SDD Core and SDD B2B rulebooks (EPC016-06, EPC222-07) and their
implementation guidelines (for Core: EPC130-08 customer-to-bank, EPC114-06 interbank): AT-01
the mandate reference, AT-25 its signature date, AT-21 the sequence type (the EPC no longer
requires FRST before RCUR since 2016, but the codes stay), AT-02 the creditor identifier. RPRE
(a re-presentment) is ISO's, not SEPA's, and is refused."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Literal

from payments.iso20022.document import Element, find, refusal, sub, text
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.fields import (
    check_creditor_identifier,
    check_iban,
    check_text,
    parse_date,
)
from payments.iso20022.messages import MessageType

SequenceType = Literal["FRST", "RCUR", "OOFF", "FNAL"]
SEQUENCE_TYPES: frozenset[str] = frozenset({"FRST", "RCUR", "OOFF", "FNAL"})
LocalInstrument = Literal["CORE", "B2B"]
LOCAL_INSTRUMENTS: frozenset[str] = frozenset({"CORE", "B2B"})
SEPA_SCHEME = "SEPA"
MANDATE_LIMIT = 35

_SCHEME_ID = "Id/PrvtId/Othr/Id"
_SCHEME_NAME = "Id/PrvtId/Othr/SchmeNm/Prtry"


def check_sequence_type(value: str) -> str:
    if value not in SEQUENCE_TYPES:
        raise Iso20022Error(f"sequence type {value!r} is not one of SEPA's (FRST RCUR OOFF FNAL)")
    return value


def check_local_instrument(value: str) -> str:
    if value not in LOCAL_INSTRUMENTS:
        raise Iso20022Error(f"local instrument {value!r} is not a SEPA direct debit's (CORE, B2B)")
    return value


def check_mandate_id(value: str) -> str:
    # The EPC allows its character set in a mandate reference, and no "/" at either end nor "//";
    # the reference is the creditor's, kept as it gave it (Max35Text).
    return check_text(value, MANDATE_LIMIT, "mandate id")


def write_payment_type(
    parent: Element, local_instrument: str, sequence_type: str, tag: str = "PmtTpInf"
) -> None:
    kind = sub(parent, tag)
    sub(kind, "SvcLvl/Cd", SEPA_SCHEME)
    sub(kind, "LclInstrm/Cd", local_instrument)
    sub(kind, "SeqTp", sequence_type)


def read_payment_type(parent: Element, message: MessageType) -> tuple[str, str]:
    """The local instrument and sequence type of the payment type under `parent`."""
    kind = find(parent, "PmtTpInf")
    if kind is None:
        raise refusal(parent, "PmtTpInf is missing (a SEPA direct debit states its type)", message)
    instrument = text(kind, "LclInstrm/Cd")
    sequence = text(kind, "SeqTp")
    if instrument is None:
        raise refusal(kind, "LclInstrm/Cd is missing (CORE or B2B)", message)
    if sequence is None:
        raise refusal(kind, "SeqTp is missing (FRST, RCUR, OOFF or FNAL)", message)
    service = text(kind, "SvcLvl/Cd")
    if service != SEPA_SCHEME:
        raise refusal(kind, f"service level {service} is not SEPA", message)
    try:
        return check_local_instrument(instrument), check_sequence_type(sequence)
    except Iso20022Error as error:
        raise refusal(kind, error.reason, message) from None


def write_creditor_scheme_id(parent: Element, identifier: str) -> None:
    other = sub(parent, "CdtrSchmeId/Id/PrvtId/Othr")
    sub(other, "Id", identifier)
    sub(other, "SchmeNm/Prtry", SEPA_SCHEME)


def read_creditor_scheme_id(parent: Element, message: MessageType) -> str | None:
    """The creditor identifier at `parent/CdtrSchmeId`, None when there is none; one under
    another scheme name than SEPA, or not a private identification, is refused."""
    scheme = find(parent, "CdtrSchmeId")
    if scheme is None:
        return None
    identifier = text(scheme, _SCHEME_ID)
    if identifier is None or text(scheme, _SCHEME_NAME) != SEPA_SCHEME:
        raise refusal(
            scheme, "CdtrSchmeId is not a SEPA creditor identifier (PrvtId/Othr, SEPA)", message
        )
    try:
        return check_creditor_identifier(identifier)
    except Iso20022Error as error:
        raise refusal(scheme, error.reason, message) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Amendment:
    """A mandate amended since the last collection (`AmdmntInd` true, `AmdmntInfDtls`): the
    reference (AT-19, `OrgnlMndtId`) and the debtor account (AT-24, `OrgnlDbtrAcct`) the
    debtor's bank knew, None for one that did not change."""

    original_mandate_id: str | None = None
    original_debtor_iban: str | None = None

    def __post_init__(self):
        if self.original_mandate_id is None and self.original_debtor_iban is None:
            raise Iso20022Error("an amendment names the original mandate id or debtor account")
        if self.original_mandate_id is not None:
            check_mandate_id(self.original_mandate_id)
        if self.original_debtor_iban is not None:
            object.__setattr__(
                self,
                "original_debtor_iban",
                check_iban(self.original_debtor_iban, "original debtor IBAN"),
            )


def write_mandate(
    parent: Element,
    mandate_id: str,
    signed_on: datetime.date,
    amendment: Amendment | None = None,
) -> Element:
    """`DrctDbtTx` with the mandate (and its amendment, if any); returned so that a message can
    add its creditor id."""
    transaction = sub(parent, "DrctDbtTx")
    mandate = sub(transaction, "MndtRltdInf")
    sub(mandate, "MndtId", mandate_id)
    sub(mandate, "DtOfSgntr", signed_on.isoformat())
    if amendment is not None:
        sub(mandate, "AmdmntInd", "true")
        details = sub(mandate, "AmdmntInfDtls")
        if amendment.original_mandate_id is not None:
            sub(details, "OrgnlMndtId", amendment.original_mandate_id)
        if amendment.original_debtor_iban is not None:
            sub(details, "OrgnlDbtrAcct/Id/IBAN", amendment.original_debtor_iban)
    return transaction


def read_amendment(parent: Element, message: MessageType) -> Amendment | None:
    """The amendment under `parent/DrctDbtTx/MndtRltdInf`: None unless `AmdmntInd` is true."""
    mandate = find(parent, "DrctDbtTx/MndtRltdInf")
    if mandate is None or text(mandate, "AmdmntInd") not in ("true", "1"):
        return None
    details = find(mandate, "AmdmntInfDtls")
    if details is None:
        raise refusal(mandate, "AmdmntInd is true and AmdmntInfDtls is missing", message)
    try:
        return Amendment(
            original_mandate_id=text(details, "OrgnlMndtId"),
            original_debtor_iban=text(details, "OrgnlDbtrAcct/Id/IBAN"),
        )
    except Iso20022Error as error:
        raise refusal(details, error.reason, message) from None


def read_mandate(parent: Element, message: MessageType) -> tuple[str, datetime.date]:
    """The mandate id and signature date under `parent/DrctDbtTx`, both required in SEPA."""
    mandate = find(parent, "DrctDbtTx/MndtRltdInf")
    if mandate is None:
        raise refusal(
            parent, "DrctDbtTx/MndtRltdInf is missing (SEPA collects on a mandate)", message
        )
    mandate_id = text(mandate, "MndtId")
    signed = text(mandate, "DtOfSgntr")
    if mandate_id is None:
        raise refusal(mandate, "MndtId is missing", message)
    if signed is None:
        raise refusal(mandate, "DtOfSgntr is missing", message)
    try:
        return check_mandate_id(mandate_id), parse_date(signed, "mandate signature date")
    except Iso20022Error as error:
        raise refusal(mandate, error.reason, message) from None
