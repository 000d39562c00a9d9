"""The File Control Record (record type 9): closes the file with its counts and totals; lines of
94 "9"s after it fill the last block of 10 records.

Layout (NACHA Operating Rules, Appendix Three, "File Control Record"; restated by the Nacha ACH
Developer Guide, "ACH File Details"):

    1       Record Type Code                "9"
    2-7     Batch Count                     batch header records
    8-13    Block Count                     blocks of 10 records, the padding included
    14-21   Entry/Addenda Count             entry detail and addenda records of the file
    22-31   Entry Hash                      sum of the batches' entry hashes, last 10 digits
    32-43   Total Debit Entry Dollar Amount in File   cents
    44-55   Total Credit Entry Dollar Amount in File  cents
    56-94   reserved
"""

from __future__ import annotations

from dataclasses import dataclass

from payments.nacha.fields import Layout, Numeric, Record, constant, field, reserved

BLOCKING_FACTOR = 10
PADDING = "9" * 94


@dataclass(frozen=True, slots=True, kw_only=True)
class FileControl(Record):
    batch_count: int
    block_count: int
    entry_addenda_count: int
    entry_hash: int
    total_debit: int
    total_credit: int

    LAYOUT = Layout(
        "file control",
        (
            constant(1, 1, "9", "record type code"),
            field("batch_count", 2, 7, Numeric(), "batch count"),
            field("block_count", 8, 13, Numeric(), "block count"),
            field("entry_addenda_count", 14, 21, Numeric(), "entry/addenda count"),
            field("entry_hash", 22, 31, Numeric(), "entry hash"),
            field("total_debit", 32, 43, Numeric(), "total debit entry dollar amount in file"),
            field("total_credit", 44, 55, Numeric(), "total credit entry dollar amount in file"),
            reserved(56, 94),
        ),
    )
