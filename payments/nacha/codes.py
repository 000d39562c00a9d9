"""The codes of the NACHA formats TX writes and reads: service class codes, Standard Entry Class
codes, transaction codes, return reason codes (R01-R85, with the dishonored and contested
dishonored returns) and Notification of Change codes (C01-C14).

Sources: NACHA Operating Rules, Appendix Three (ACH Record Format Specifications: service class
and transaction codes), Appendix Four (Return Entries: the return reason codes, their time
frames, the dishonored and contested dishonored return codes) and Appendix Five (Notification of
Change: the change codes and what their corrected data holds). The rules are not public; the
tables were checked against the public restatements of them: the Nacha ACH Developer Guide
(achdevguide.nacha.org), the return-code tables of ACH processors' developer documentation
(PayNearMe's "ACH Return Codes", GrailPay's "Return Codes", both with their time frames), and
the code dictionaries of the moov-io/ach project (Apache-2.0: `addenda99.go`, `addenda98.go`,
`addenda99_dishonored_return.go`, `addenda99_contested_return.go`). Nacha's 2006 operations
bulletin "Proper Use of Return Reason Code R69" says why R63-R66 are no longer codes: their
cases were merged into R69 (Field Errors).

The return time frames are the Rules' deadlines for the RDFI's return to reach the ODFI,
counted from the settlement date of the entry returned: 2 banking days for most codes; 60
calendar days for the codes of an unauthorized or improper debit to a consumer account (R05,
R07, R10, R11) and of the check-conversion and re-presented-check debits (R33, R37, R38, R51,
R52, R53). R29 (a corporate receiver's unauthorized debit) is 2 banking days, not 60: the
60-day window protects consumers. A dishonored return is due 5 banking days after the
settlement date of the return it dishonors, a contested dishonored return 2 banking days after
the dishonored return's. Codes without a window: the ACH Operator's own returns (R13, R18, R19,
R25-R28: made as the file is processed), returns by agreement with the ODFI (R06, R31), and the
codes of entries TX does not originate (ENR R40-R47; IAT R80-R84).

A return reason code this table does not know (one Nacha adds later) is still read: returns are
facts TX must book, not requests to refuse (`return_reason` gives it the normalized name
`unknown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# --- service class codes (batch header and control, positions 2-4) --------------------------
MIXED = 200
CREDITS_ONLY = 220
DEBITS_ONLY = 225
SERVICE_CLASS_CODES = {
    MIXED: "mixed debits and credits",
    CREDITS_ONLY: "credits only",
    DEBITS_ONLY: "debits only",
}

# --- Standard Entry Class codes (batch header, positions 51-53) -------------------------------
# PPD: prearranged payments and deposits, to consumer accounts; CCD: corporate credits or
# debits; WEB: internet-initiated consumer debits (and person-to-person credits). COR is the
# class of a batch of Notifications of Change (the RDFI's, and the simulated bank's). Other
# classes (CTX, TEL, IAT, ...) are refused: TX neither originates nor reads them yet.
SEC_CODES = frozenset({"PPD", "CCD", "WEB", "COR"})


# --- transaction codes (entry detail, positions 2-3) -------------------------------------------
Direction = Literal["credit", "debit"]
AccountType = Literal["checking", "savings"]


@dataclass(frozen=True)
class TransactionCode:
    """What a transaction code says: the direction of the money for the receiver's account, the
    account type, and whether the entry is live, a prenote (a zero-dollar entry that tests the
    account) or a return or Notification of Change of an entry of that direction."""

    code: int
    direction: Direction
    account_type: AccountType
    kind: Literal["live", "prenote", "return_or_noc"]

    @property
    def is_prenote(self) -> bool:
        return self.kind == "prenote"

    @property
    def is_return_or_noc(self) -> bool:
        return self.kind == "return_or_noc"


TRANSACTION_CODES = {
    each.code: each
    for each in (
        TransactionCode(21, "credit", "checking", "return_or_noc"),
        TransactionCode(22, "credit", "checking", "live"),
        TransactionCode(23, "credit", "checking", "prenote"),
        TransactionCode(26, "debit", "checking", "return_or_noc"),
        TransactionCode(27, "debit", "checking", "live"),
        TransactionCode(28, "debit", "checking", "prenote"),
        TransactionCode(31, "credit", "savings", "return_or_noc"),
        TransactionCode(32, "credit", "savings", "live"),
        TransactionCode(33, "credit", "savings", "prenote"),
        TransactionCode(36, "debit", "savings", "return_or_noc"),
        TransactionCode(37, "debit", "savings", "live"),
        TransactionCode(38, "debit", "savings", "prenote"),
    )
}


def transaction_code(
    direction: Direction, account_type: AccountType, *, prenote: bool = False
) -> int:
    """The code of an entry TX originates: 22/32 credit, 27/37 debit, +1 for a prenote."""
    for code, each in TRANSACTION_CODES.items():
        if (
            each.direction == direction
            and each.account_type == account_type
            and each.kind == ("prenote" if prenote else "live")
        ):
            return code
    raise ValueError(f"no transaction code for {direction} {account_type}")


# --- return reason codes (addenda 99, positions 4-6) -------------------------------------------
ReturnKind = Literal["return", "dishonored", "contested"]


@dataclass(frozen=True)
class ReturnWindow:
    """How long after the settlement date of the entry it answers a return may arrive."""

    days: int
    unit: Literal["banking", "calendar"]


TWO_BANKING_DAYS = ReturnWindow(2, "banking")
SIXTY_CALENDAR_DAYS = ReturnWindow(60, "calendar")
FIVE_BANKING_DAYS = ReturnWindow(5, "banking")


@dataclass(frozen=True)
class ReturnReason:
    code: str
    title: str
    normalized: str
    window: ReturnWindow | None
    kind: ReturnKind = "return"


def _reasons(kind: ReturnKind, window: ReturnWindow | None, *rows):
    return {
        code: ReturnReason(code, title, normalized, window, kind)
        for code, title, normalized in rows
    }


_2B, _60C = TWO_BANKING_DAYS, SIXTY_CALENDAR_DAYS
RETURN_REASONS: dict[str, ReturnReason] = {
    **{
        code: ReturnReason(code, title, normalized, window)
        for code, title, normalized, window in (
            ("R01", "Insufficient Funds", "insufficient_funds", _2B),
            ("R02", "Account Closed", "account_closed", _2B),
            ("R03", "No Account/Unable to Locate Account", "no_account", _2B),
            ("R04", "Invalid Account Number Structure", "invalid_account_number", _2B),
            (
                "R05",
                "Unauthorized Debit to Consumer Account Using Corporate SEC Code",
                "unauthorized",
                _60C,
            ),
            ("R06", "Returned per ODFI's Request", "returned_per_odfi_request", None),
            ("R07", "Authorization Revoked by Customer", "authorization_revoked", _60C),
            ("R08", "Payment Stopped", "payment_stopped", _2B),
            ("R09", "Uncollected Funds", "uncollected_funds", _2B),
            (
                "R10",
                "Customer Advises Unauthorized, Improper, Ineligible, or Part of an "
                "Incomplete Transaction",
                "unauthorized",
                _60C,
            ),
            (
                "R11",
                "Customer Advises Entry Not in Accordance with the Terms of the Authorization",
                "not_as_authorized",
                _60C,
            ),
            ("R12", "Account Sold to Another DFI", "account_sold", _2B),
            ("R13", "Invalid ACH Routing Number", "invalid_routing_number", None),
            (
                "R14",
                "Representative Payee Deceased or Unable to Continue in That Capacity",
                "representative_payee_deceased",
                _2B,
            ),
            (
                "R15",
                "Beneficiary or Account Holder (Other Than a Representative Payee) Deceased",
                "account_holder_deceased",
                _2B,
            ),
            ("R16", "Account Frozen/Entry Returned per OFAC Instruction", "account_frozen", _2B),
            (
                "R17",
                "File Record Edit Criteria/Entry with Invalid Account Number Initiated "
                "Under Questionable Circumstances/Return of Improperly-Initiated Reversal",
                "could_not_process",
                _2B,
            ),
            ("R18", "Improper Effective Entry Date", "improper_effective_date", None),
            ("R19", "Amount Field Error", "amount_field_error", None),
            ("R20", "Non-Transaction Account", "non_transaction_account", _2B),
            ("R21", "Invalid Company Identification", "invalid_company_id", _2B),
            ("R22", "Invalid Individual ID Number", "invalid_individual_id", _2B),
            ("R23", "Credit Entry Refused by Receiver", "credit_refused", _2B),
            ("R24", "Duplicate Entry", "duplicate_entry", _2B),
            ("R25", "Addenda Error", "addenda_error", None),
            ("R26", "Mandatory Field Error", "mandatory_field_error", None),
            ("R27", "Trace Number Error", "trace_number_error", None),
            ("R28", "Routing Number Check Digit Error", "invalid_routing_number", None),
            ("R29", "Corporate Customer Advises Not Authorized", "unauthorized", _2B),
            (
                "R30",
                "RDFI Not Participant in Check Truncation Program",
                "rdfi_not_participant",
                _2B,
            ),
            (
                "R31",
                "Permissible Return Entry (CCD and CTX only)",
                "returned_per_odfi_request",
                None,
            ),
            ("R32", "RDFI Non-Settlement", "rdfi_non_settlement", _2B),
            ("R33", "Return of XCK Entry", "xck_return", _60C),
            ("R34", "Limited Participation DFI", "limited_participation_dfi", _2B),
            ("R35", "Return of Improper Debit Entry", "improper_debit", _2B),
            ("R36", "Return of Improper Credit Entry", "improper_credit", _2B),
            ("R37", "Source Document Presented for Payment", "source_document_presented", _60C),
            ("R38", "Stop Payment on Source Document", "payment_stopped", _60C),
            (
                "R39",
                "Improper Source Document/Source Document Presented for Payment",
                "improper_source_document",
                _2B,
            ),
            ("R40", "Return of ENR Entry by Federal Government Agency", "enr_returned", None),
            ("R41", "Invalid Transaction Code (ENR only)", "enr_invalid_transaction_code", None),
            (
                "R42",
                "Routing Number/Check Digit Error (ENR only)",
                "enr_invalid_routing_number",
                None,
            ),
            ("R43", "Invalid DFI Account Number (ENR only)", "enr_invalid_account_number", None),
            (
                "R44",
                "Invalid Individual ID Number/Identification Number (ENR only)",
                "enr_invalid_individual_id",
                None,
            ),
            ("R45", "Invalid Individual Name/Company Name (ENR only)", "enr_invalid_name", None),
            (
                "R46",
                "Invalid Representative Payee Indicator (ENR only)",
                "enr_invalid_payee_indicator",
                None,
            ),
            ("R47", "Duplicate Enrollment (ENR only)", "enr_duplicate_enrollment", None),
            ("R50", "State Law Affecting RCK Acceptance", "rck_state_law", _2B),
            (
                "R51",
                "Item Related to RCK Entry is Ineligible or RCK Entry is Improper",
                "rck_item_ineligible",
                _60C,
            ),
            ("R52", "Stop Payment on Item Related to RCK Entry", "payment_stopped", _60C),
            ("R53", "Item and RCK Entry Presented for Payment", "rck_item_presented", _60C),
            ("R80", "IAT Entry Coding Error", "iat_coding_error", None),
            ("R81", "Non-Participant in IAT Program", "iat_non_participant", None),
            (
                "R82",
                "Invalid Foreign Receiving DFI Identification",
                "iat_invalid_foreign_rdfi",
                None,
            ),
            (
                "R83",
                "Foreign Receiving DFI Unable to Settle",
                "iat_foreign_rdfi_cannot_settle",
                None,
            ),
            ("R84", "Entry Not Processed by Gateway", "iat_not_processed_by_gateway", None),
            (
                "R85",
                "Incorrectly Coded Outbound International Payment",
                "incorrectly_coded_international",
                _2B,
            ),
        )
    },
    # Dishonored returns: the ODFI sends a return back to the RDFI that made it.
    **_reasons(
        "dishonored",
        FIVE_BANKING_DAYS,
        ("R61", "Misrouted Return", "misrouted_return"),
        ("R62", "Return of Erroneous or Reversing Debit", "erroneous_or_reversing_debit"),
        ("R67", "Duplicate Return", "duplicate_return"),
        ("R68", "Untimely Return", "untimely_return"),
        ("R69", "Field Error(s)", "return_field_errors"),
        (
            "R70",
            "Permissible Return Entry Not Accepted/Return Not Requested by ODFI",
            "return_not_requested",
        ),
    ),
    # Contested dishonored returns: the RDFI answers a dishonored return.
    **_reasons(
        "contested",
        TWO_BANKING_DAYS,
        ("R71", "Misrouted Dishonored Return", "misrouted_dishonored_return"),
        ("R72", "Untimely Dishonored Return", "untimely_dishonored_return"),
        ("R73", "Timely Original Return", "timely_original_return"),
        ("R74", "Corrected Return", "corrected_return"),
        ("R75", "Return Not a Duplicate", "return_not_duplicate"),
        ("R76", "No Errors Found", "no_errors_found"),
        ("R77", "Non-Acceptance of R62 Dishonored Return", "r62_dishonor_not_accepted"),
    ),
}


def return_kind(code: str) -> ReturnKind:
    """Which addenda 99 layout a return reason code takes: R61-R70 dishonored, R71-R77
    contested, every other code a return's (by range, so a code Nacha adds in a range still
    takes its range's layout)."""
    number = int(code[1:])
    if 61 <= number <= 70:
        return "dishonored"
    if 71 <= number <= 77:
        return "contested"
    return "return"


def return_reason(code: str) -> ReturnReason:
    """The reason of a code, or an `unknown` one (no window) for a code not in the table."""
    known = RETURN_REASONS.get(code)
    if known is not None:
        return known
    return ReturnReason(code, "Unknown return reason code", "unknown", None, return_kind(code))


# --- Notification of Change codes (addenda 98, positions 4-6) ---------------------------------


@dataclass(frozen=True)
class ChangeCode:
    """A change code and what the 29 positions of its Corrected Data hold (offsets within the
    field, 1-based): `parts` names the corrected values and their spans."""

    code: str
    title: str
    parts: tuple[tuple[str, int, int], ...]


CHANGE_CODES = {
    each.code: each
    for each in (
        ChangeCode("C01", "Incorrect DFI Account Number", (("account_number", 1, 17),)),
        ChangeCode("C02", "Incorrect Routing Number", (("routing_number", 1, 9),)),
        ChangeCode(
            "C03",
            "Incorrect Routing Number and Incorrect DFI Account Number",
            (("routing_number", 1, 9), ("account_number", 13, 29)),
        ),
        ChangeCode("C04", "Incorrect Individual Name/Receiving Company Name", (("name", 1, 22),)),
        ChangeCode("C05", "Incorrect Transaction Code", (("transaction_code", 1, 2),)),
        ChangeCode(
            "C06",
            "Incorrect DFI Account Number and Incorrect Transaction Code",
            (("account_number", 1, 17), ("transaction_code", 21, 22)),
        ),
        ChangeCode(
            "C07",
            "Incorrect Routing Number, Incorrect DFI Account Number, and Incorrect Transaction "
            "Code",
            (("routing_number", 1, 9), ("account_number", 10, 26), ("transaction_code", 27, 28)),
        ),
        # IAT only: the foreign receiving DFI's identification, which TX never sends.
        ChangeCode("C08", "Incorrect Receiving DFI Identification (IAT only)", ()),
        ChangeCode(
            "C09", "Incorrect Individual Identification Number", (("identification_number", 1, 22),)
        ),
        # C10-C12 are in older editions of the Rules (corrections of the originator's company
        # name and identification); read, their corrected data kept whole.
        ChangeCode("C10", "Incorrect Company Name", ()),
        ChangeCode("C11", "Incorrect Company Identification", ()),
        ChangeCode("C12", "Incorrect Company Name and Company Identification", ()),
        # The entry was posted; its addenda record was unclear: nothing to correct in the entry.
        ChangeCode("C13", "Addenda Format Error", ()),
        # The entry should have been IAT: the corrected data holds the SEC code "IAT".
        ChangeCode("C14", "Incorrect SEC Code for Outbound International Payment", ()),
    )
}
