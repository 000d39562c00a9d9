"""The ISO 20022 codes TX reads and writes in status reports, returns and notifications:
payment statuses and the reasons of rejects, returns, refunds and recalls.

Sources: ISO 20022 External Code Sets (iso20022.org, "External Code Sets":
ExternalPaymentTransactionStatus1Code, ExternalStatusReason1Code, ExternalReturnReason1Code,
ExternalCancellationReason1Code, ExternalPaymentCancellationRejection1Code)
and the EPC's SEPA rulebooks, which name the codes a reject, return, refund or recall may
carry (SCT rulebook EPC125-05 and SDD Core rulebook EPC016-06, "Reason codes for
R-transactions"). Each reason has the normalized name TX stores beside the raw code, the same
names as the NACHA return reasons where the case is the same (AC04 and R02 are both
`account_closed`).

A code this table does not know is read, not refused: a reject or a return is a fact TX must
book (`reason(code)` names it `unknown`), as with NACHA return codes.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- payment statuses (ExternalPaymentTransactionStatus1Code, ExternalPaymentGroupStatus1Code) --
STATUSES: dict[str, str] = {
    "ACTC": "accepted technical validation",
    "ACCP": "accepted customer profile",
    "ACSP": "accepted settlement in process",
    "ACSC": "accepted settlement completed",
    "ACCC": "accepted settlement completed on the creditor's account",
    "ACWC": "accepted with change",
    "ACWP": "accepted without posting",
    "ACFC": "accepted funds checked",
    "PART": "partially accepted",
    "PDNG": "pending",
    "RCVD": "received",
    "RJCT": "rejected",
    "CANC": "cancelled",
}
ACCEPTED = frozenset({"ACTC", "ACCP", "ACSP", "ACSC", "ACCC", "ACWC", "ACWP", "ACFC"})
REJECTED = "RJCT"


@dataclass(frozen=True)
class Reason:
    code: str
    title: str
    normalized: str


REASONS: dict[str, Reason] = {
    code: Reason(code, title, normalized)
    for code, title, normalized in (
        ("AC01", "Incorrect Account Number", "no_account"),
        ("AC03", "Invalid Creditor Account Number", "no_account"),
        ("AC04", "Closed Account Number", "account_closed"),
        ("AC06", "Blocked Account", "account_frozen"),
        ("AC13", "Invalid Debtor Account Type", "invalid_account_type"),
        ("AG01", "Transaction Forbidden", "transaction_forbidden"),
        ("AG02", "Invalid Bank Operation Code", "invalid_operation"),
        ("AM04", "Insufficient Funds", "insufficient_funds"),
        ("AM05", "Duplication", "duplicate_entry"),
        ("AM09", "Wrong Amount", "wrong_amount"),
        ("AM23", "Amount Exceeds Settlement Limit", "amount_over_limit"),
        ("BE05", "Unrecognised Initiating Party", "unknown_originator"),
        ("CNOR", "Creditor Bank Is Not Registered", "bank_not_reachable"),
        ("DNOR", "Debtor Bank Is Not Registered", "bank_not_reachable"),
        ("CUST", "Requested By Customer", "requested_by_customer"),
        ("DUPL", "Duplicate Payment", "duplicate_entry"),
        ("ED05", "Settlement Failed", "settlement_failed"),
        ("FF01", "Invalid File Format", "invalid_file"),
        ("FOCR", "Following Cancellation Request", "recalled"),
        ("FRAD", "Fraudulent Origin", "fraud"),
        ("LEGL", "Legal Decision", "legal_decision"),
        ("MD01", "No Mandate", "unauthorized"),
        ("MD02", "Missing Mandatory Information In Mandate", "invalid_mandate"),
        ("MD06", "Refund Request By End Customer", "refund_requested"),
        ("MD07", "End Customer Deceased", "account_holder_deceased"),
        ("MS02", "Not Specified Reason Customer Generated", "refused_by_customer"),
        ("MS03", "Not Specified Reason Agent Generated", "refused_by_bank"),
        ("NOAS", "No Answer From Customer", "no_answer"),
        ("NOOR", "No Original Transaction Received", "original_not_received"),
        ("ARDT", "Already Returned Transaction", "already_returned"),
        ("RC01", "Bank Identifier Incorrect", "invalid_bank_identifier"),
        ("RR01", "Missing Debtor Account Or Identification", "regulatory_reason"),
        ("RR02", "Missing Debtor Name Or Address", "regulatory_reason"),
        ("RR03", "Missing Creditor Name Or Address", "regulatory_reason"),
        ("RR04", "Regulatory Reason", "regulatory_reason"),
        ("SL01", "Specific Service Offered By Debtor Agent", "refused_by_bank"),
        ("TM01", "Invalid Cut Off Time", "after_cut_off"),
        ("AB05", "Timeout Creditor Agent", "timeout"),
        ("AB06", "Timeout Instructed Agent", "timeout"),
        ("AB08", "Offline Creditor Agent", "bank_not_reachable"),
        ("TECH", "Technical Problem", "technical_problem"),
    )
}


def reason(code: str) -> Reason:
    """The reason of a code, or an `unknown` one for a code the table does not know."""
    known = REASONS.get(code)
    return known if known is not None else reason_unknown(code)


# --- recalls (camt.056) and their answers (camt.029) --------------------------------------------
# The reasons the EPC's SCT and SCT Inst rulebooks allow a recall (a camt.056): a duplicate
# sending, a technical problem, a fraudulent origin, and, at the originator's request, a wrong
# beneficiary account (AC03), a wrong amount (AM09) or no reason given (CUST).
RECALL_REASONS = frozenset({"DUPL", "TECH", "FRAD", "AC03", "AM09", "CUST"})
# The reasons the rulebooks give a negative answer to a recall (a camt.029 RJCR): the account
# closed, too little money left, no answer from the beneficiary or its refusal, no original
# received, already returned, a legal decision.
RECALL_REFUSALS = frozenset({"AC04", "AM04", "NOAS", "CUST", "NOOR", "ARDT", "LEGL"})


def recall_reason(code: str) -> Reason:
    """The reason of a recall's code; a code outside the EPC's list of recall reasons is
    `unknown` (read, not refused), even one that names another case elsewhere."""
    return reason(code) if code in RECALL_REASONS else reason_unknown(code)


def recall_refusal(code: str) -> Reason:
    """The reason of a refused recall's code, `unknown` outside the EPC's list."""
    return reason(code) if code in RECALL_REFUSALS else reason_unknown(code)


def reason_unknown(code: str) -> Reason:
    return Reason(code, "Unknown reason code", "unknown")
