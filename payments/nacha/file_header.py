"""The File Header Record (record type 1): the first record of a file.

Layout (NACHA Operating Rules, Appendix Three, "File Header Record"; restated by the Nacha ACH
Developer Guide, "ACH File Details"):

    1       Record Type Code            "1"
    2-3     Priority Code               "01"
    4-13    Immediate Destination       blank + 9-digit routing number (bTTTTAAAAC)
    14-23   Immediate Origin            blank + 9 digits, or 10 characters agreed with the ODFI
    24-29   File Creation Date          YYMMDD
    30-33   File Creation Time          HHMM (optional: blank)
    34      File ID Modifier            A-Z, 0-9: tells apart files of one origin and day
    35-37   Record Size                 "094"
    38-39   Blocking Factor             "10"
    40      Format Code                 "1"
    41-63   Immediate Destination Name  alphanumeric
    64-86   Immediate Origin Name       alphanumeric
    87-94   Reference Code              alphanumeric
"""

from __future__ import annotations

import datetime
import string
from dataclasses import dataclass

from payments.nacha.fields import (
    Alphanumeric,
    Code,
    Date,
    Layout,
    Origin,
    Record,
    Routing,
    Time,
    constant,
    field,
)

FILE_ID_MODIFIERS = frozenset(string.ascii_uppercase + string.digits)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileHeader(Record):
    immediate_destination: str
    immediate_origin: str
    file_creation_date: datetime.date
    file_creation_time: datetime.time | None = None
    file_id_modifier: str = "A"
    immediate_destination_name: str = ""
    immediate_origin_name: str = ""
    reference_code: str = ""

    LAYOUT = Layout(
        "file header",
        (
            constant(1, 1, "1", "record type code"),
            constant(2, 3, "01", "priority code"),
            field(
                "immediate_destination", 4, 13, Routing(leading_blank=True), "immediate destination"
            ),
            field("immediate_origin", 14, 23, Origin(), "immediate origin"),
            field("file_creation_date", 24, 29, Date(), "file creation date"),
            field("file_creation_time", 30, 33, Time(), "file creation time"),
            field("file_id_modifier", 34, 34, Code(allowed=FILE_ID_MODIFIERS), "file ID modifier"),
            constant(35, 37, "094", "record size"),
            constant(38, 39, "10", "blocking factor"),
            constant(40, 40, "1", "format code"),
            field(
                "immediate_destination_name", 41, 63, Alphanumeric(), "immediate destination name"
            ),
            field("immediate_origin_name", 64, 86, Alphanumeric(), "immediate origin name"),
            field("reference_code", 87, 94, Alphanumeric(), "reference code"),
        ),
    )
