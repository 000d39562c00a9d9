"""A return entry: what a receiving bank (RDFI) sends back for an entry it does not take, an
entry detail with the return's transaction code and one addenda 99 naming the entry it answers
(NACHA Operating Rules, Appendix Four). TX writes them for the inbound entries it cannot apply
(`payments.services.cutoff`); the simulated bank for the entries TX sent."""

from stdnum.us import rtn

from payments.nacha.addenda import ReturnAddenda
from payments.nacha.codes import TRANSACTION_CODES, transaction_code
from payments.nacha.entry import EntryDetail
from payments.nacha.file import Entry


def routing_of(identification: str) -> str:
    """The 9-digit routing number of an 8-digit DFI identification (its ABA check digit)."""
    return identification + rtn.calc_check_digit(identification)


def return_code_of(original_code: int) -> int:
    """The transaction code of a return of an entry of `original_code` (a prenote's too):
    21/26/31/36, the "return or notification of change" code of its kind."""
    original = TRANSACTION_CODES[original_code]
    return transaction_code(original.direction, original.account_type) - 1


def return_entry(
    *,
    original_transaction_code: int,
    original_trace_number: str,
    original_rdfi_identification: str,
    account_number: str,
    amount: int,
    receiver_name: str,
    identification_number: str,
    return_reason_code: str,
) -> Entry:
    """The return of an entry: addressed to its ODFI (the original trace number's first 8
    digits), for the same account, amount and receiver. Its trace number is the returning
    bank's, given by `numbered()` as any entry's."""
    detail = EntryDetail(
        transaction_code=return_code_of(original_transaction_code),
        routing_number=routing_of(original_trace_number[:8]),
        dfi_account_number=account_number,
        amount=amount,
        trace_number="0" * 15,
        identification_number=identification_number,
        receiver_name=receiver_name,
    )
    addenda = ReturnAddenda(
        return_reason_code=return_reason_code,
        original_entry_trace_number=original_trace_number,
        original_rdfi_identification=original_rdfi_identification,
        trace_number="0" * 15,
    )
    return Entry(detail, (addenda,))
