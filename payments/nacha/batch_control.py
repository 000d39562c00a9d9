"""The Company/Batch Control Record (record type 8): closes a batch with its counts and totals.

Layout (NACHA Operating Rules, Appendix Three, "Company/Batch Control Record"; restated by the
Nacha ACH Developer Guide, "ACH File Details"):

    1       Record Type Code                "8"
    2-4     Service Class Code              the batch header's
    5-10    Entry/Addenda Count             entry detail and addenda records of the batch
    11-20   Entry Hash                      sum of the entries' 8-digit Receiving DFI
                                            Identifications, its last 10 digits
    21-32   Total Debit Entry Dollar Amount   cents
    33-44   Total Credit Entry Dollar Amount  cents
    45-54   Company Identification          the batch header's
    55-73   Message Authentication Code     alphanumeric, optional
    74-79   reserved
    80-87   Originating DFI Identification  the batch header's
    88-94   Batch Number                    the batch header's
"""

from __future__ import annotations

from dataclasses import dataclass

from payments.nacha.codes import SERVICE_CLASS_CODES
from payments.nacha.fields import (
    Alphanumeric,
    Digits,
    Layout,
    Numeric,
    Record,
    constant,
    field,
    reserved,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchControl(Record):
    service_class_code: int
    entry_addenda_count: int
    entry_hash: int
    total_debit: int
    total_credit: int
    company_identification: str
    odfi_identification: str
    batch_number: int
    message_authentication_code: str = ""

    LAYOUT = Layout(
        "batch control",
        (
            constant(1, 1, "8", "record type code"),
            field(
                "service_class_code",
                2,
                4,
                Numeric(allowed=SERVICE_CLASS_CODES),
                "service class code",
            ),
            field("entry_addenda_count", 5, 10, Numeric(), "entry/addenda count"),
            field("entry_hash", 11, 20, Numeric(), "entry hash"),
            field("total_debit", 21, 32, Numeric(), "total debit entry dollar amount"),
            field("total_credit", 33, 44, Numeric(), "total credit entry dollar amount"),
            field(
                "company_identification",
                45,
                54,
                Alphanumeric(required=True),
                "company identification",
            ),
            field(
                "message_authentication_code", 55, 73, Alphanumeric(), "message authentication code"
            ),
            reserved(74, 79),
            field("odfi_identification", 80, 87, Digits(), "originating DFI identification"),
            field("batch_number", 88, 94, Numeric(), "batch number"),
        ),
    )
