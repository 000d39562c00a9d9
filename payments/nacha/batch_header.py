"""The Company/Batch Header Record (record type 5): opens a batch of entries of one company,
one Standard Entry Class and one effective date.

Layout (NACHA Operating Rules, Appendix Three, "Company/Batch Header Record" for every SEC code
but IAT; restated by the Nacha ACH Developer Guide, "ACH File Details"):

    1       Record Type Code                "5"
    2-4     Service Class Code              200 mixed, 220 credits only, 225 debits only
    5-20    Company Name                    alphanumeric, mandatory
    21-40   Company Discretionary Data      alphanumeric
    41-50   Company Identification          alphanumeric, mandatory
    51-53   Standard Entry Class Code       PPD, CCD, WEB (written); COR (read: NOCs)
    54-63   Company Entry Description       alphanumeric, mandatory ("PAYROLL", "PURCHASE")
    64-69   Company Descriptive Date        alphanumeric (shown to the receiver, e.g. "MAR 05")
    70-75   Effective Entry Date            YYMMDD: the day the originator wants it settled
    76-78   Settlement Date (Julian)        blank; the ACH Operator inserts it
    79      Originator Status Code          "1" for a DFI bound by the Rules ("0", "2" read)
    80-87   Originating DFI Identification  the ODFI's routing number without its check digit
    88-94   Batch Number                    ascending in the file
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.nacha.codes import SEC_CODES, SERVICE_CLASS_CODES
from payments.nacha.fields import (
    Alphanumeric,
    Code,
    Date,
    Digits,
    JulianDay,
    Layout,
    Numeric,
    Record,
    constant,
    field,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchHeader(Record):
    service_class_code: int
    company_name: str
    company_identification: str
    standard_entry_class_code: str
    company_entry_description: str
    effective_entry_date: datetime.date
    odfi_identification: str
    company_discretionary_data: str = ""
    company_descriptive_date: str = ""
    settlement_date: int | None = None
    originator_status_code: str = "1"
    batch_number: int = 1

    LAYOUT = Layout(
        "batch header",
        (
            constant(1, 1, "5", "record type code"),
            field(
                "service_class_code",
                2,
                4,
                Numeric(allowed=SERVICE_CLASS_CODES),
                "service class code",
            ),
            field("company_name", 5, 20, Alphanumeric(required=True), "company name"),
            field(
                "company_discretionary_data", 21, 40, Alphanumeric(), "company discretionary data"
            ),
            field(
                "company_identification",
                41,
                50,
                Alphanumeric(required=True),
                "company identification",
            ),
            field(
                "standard_entry_class_code",
                51,
                53,
                Code(allowed=SEC_CODES),
                "standard entry class code",
            ),
            field(
                "company_entry_description",
                54,
                63,
                Alphanumeric(required=True),
                "company entry description",
            ),
            field("company_descriptive_date", 64, 69, Alphanumeric(), "company descriptive date"),
            field("effective_entry_date", 70, 75, Date(), "effective entry date"),
            field("settlement_date", 76, 78, JulianDay(), "settlement date (Julian)"),
            field(
                "originator_status_code",
                79,
                79,
                Code(allowed={"0", "1", "2"}),
                "originator status code",
            ),
            field("odfi_identification", 80, 87, Digits(), "originating DFI identification"),
            field("batch_number", 88, 94, Numeric(), "batch number"),
        ),
    )
