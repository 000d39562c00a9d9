"""The Entry Detail Record (record type 6): one payment (or prenote, return, NOC).

Layout of PPD, CCD and WEB entries (NACHA Operating Rules, Appendix Three, "PPD Entry Detail
Record", "CCD Entry Detail Record", "WEB Entry Detail Record"; restated by the Nacha ACH
Developer Guide, "ACH File Details"). The three share every position; only the names (and
rules) of positions 40-78 differ:

    1       Record Type Code                "6"
    2-3     Transaction Code                22/23/27/28/32/33/37/38 (21/26/31/36 read)
    4-11    Receiving DFI Identification    the receiver's routing number, first 8 digits
    12      Check Digit                     its 9th digit (ABA modulus 10)
    13-29   DFI Account Number              alphanumeric, left-justified, mandatory
    30-39   Amount                          cents, 10 digits
    40-54   PPD, WEB: Individual Identification Number; CCD: Identification Number
    55-76   PPD, WEB: Individual Name; CCD: Receiving Company Name
    77-78   PPD, CCD: Discretionary Data; WEB: Payment Type Code ("R" recurring, "S" single)
    79      Addenda Record Indicator        1 when an addenda record follows, else 0
    80-94   Trace Number                    ODFI identification (8) + entry sequence (7)

The record keeps the generic names (`identification_number`, `receiver_name`,
`discretionary_data`); `payment_type_code` reads positions 77-78 by their WEB name. Positions
4-12 are one attribute, `routing_number`: the entry hash sums its first 8 digits.
"""

from __future__ import annotations

from dataclasses import dataclass

from payments.nacha.codes import TRANSACTION_CODES, TransactionCode
from payments.nacha.fields import (
    Alphanumeric,
    Digits,
    Layout,
    Numeric,
    Record,
    Routing,
    constant,
    field,
)

# The WEB Payment Type Code: recurring or single entry (blank on a person-to-person credit).
WEB_PAYMENT_TYPE_CODES = frozenset({"R", "S", ""})


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryDetail(Record):
    transaction_code: int
    routing_number: str
    dfi_account_number: str
    amount: int
    trace_number: str
    identification_number: str = ""
    receiver_name: str = ""
    discretionary_data: str = ""
    addenda_record_indicator: int = 0

    LAYOUT = Layout(
        "entry detail",
        (
            constant(1, 1, "6", "record type code"),
            field("transaction_code", 2, 3, Numeric(allowed=TRANSACTION_CODES), "transaction code"),
            field(
                "routing_number", 4, 12, Routing(), "receiving DFI identification and check digit"
            ),
            field("dfi_account_number", 13, 29, Alphanumeric(required=True), "DFI account number"),
            field("amount", 30, 39, Numeric(), "amount"),
            field("identification_number", 40, 54, Alphanumeric(), "identification number"),
            field("receiver_name", 55, 76, Alphanumeric(), "individual or receiving company name"),
            field(
                "discretionary_data",
                77,
                78,
                Alphanumeric(),
                "discretionary data or payment type code",
            ),
            field(
                "addenda_record_indicator",
                79,
                79,
                Numeric(allowed={0, 1}),
                "addenda record indicator",
            ),
            field("trace_number", 80, 94, Digits(), "trace number"),
        ),
    )

    @classmethod
    def rules(cls, values):
        # A prenote tests the account: it carries no money.
        if TRANSACTION_CODES[values["transaction_code"]].is_prenote and values["amount"] != 0:
            yield "amount", f"a prenote (transaction code {values['transaction_code']}) must be 0"

    @property
    def code(self) -> TransactionCode:
        return TRANSACTION_CODES[self.transaction_code]

    @property
    def rdfi_identification(self) -> str:
        """The 8 digits the entry hash adds up."""
        return self.routing_number[:8]

    @property
    def payment_type_code(self) -> str:
        """Positions 77-78 of a WEB entry."""
        return self.discretionary_data
