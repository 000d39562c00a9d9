"""The partner bank's (or the clearing's) SEPA answers read (docs/payments.md, "SEPA files"): ISO
20022 documents from the `sepa` inbox or `POST /rail-files` (rail `sepa_ct`), stored and applied
once by their bytes as NACHA files are (`inbound_files.rail_file_receive`, which calls
`sepa_file_apply` in its transaction). A document is read by its namespace and refused whole,
with the validator's message, unless it is a pain.002, a camt.054, a camt.029, a camt.056, a
pacs.002, a pacs.003, a pacs.004 or a pacs.008 that validates against its official XSD
(`payments.iso20022`: safe parsing, no entity, no network).

- a **pain.002** status report answers a pain.001 of TX's: a transaction rejected (`RJCT`)
  is the bank's rejection of its order (`returns.order_return`: `rejected`, its money back to
  the account from the clearing account, the raw reason code AC01, AC04, AM04... kept beside
  the normalized reason); a whole message or payment instruction rejected rejects every order
  of TX's file it names. An accepted status (ACCP, ACSP...) moves nothing: the order waits for
  its booking;
- a **camt.054** notification of the institution's settlement account: a booked debit entry
  (`BOOK`, `DBIT`) of an order's end-to-end id settles it (`settlement.order_settle`: its
  money from the clearing to the settlement account); a transaction with return information
  (`RtrInf`, a credit back) returns it (`returned` once settled, what came back to the
  customer from the settlement account), its reason kept raw and normalized; FOCR, the money
  of an accepted recall (`recalls`);
- a **camt.029** answers TX's recalls (`recalls.recall_answers`): accepted or refused;
- a **camt.056** recalls a credit TX received, for TX to answer (`inbound_recalls`), forwarded
  by the partner bank or, to an `interbank` profile, by the clearing;
- a **pacs.002** of the clearing answers an `interbank` profile's pacs.008 or pacs.003: a
  transaction settled (`ACSC`) settles its order (`settlement.order_settle`: a credit transfer's
  money leaves the clearing account, a collection's comes to the customer's account), one
  rejected rejects it as a pain.002's rejection does, a message rejected whole rejects its
  file's orders no status named; a SEPA Instant order's status is its answer, read as a
  pain.002's is (`instant_answers.instant_status`: settled or rejected at once, a late one
  recorded);
- a **pacs.003** of the clearing presents other banks' collections from the institution's
  accounts (`inbound_debits`: kept for their settlement date, or rejected with TX's pacs.002);
- a **pacs.008** of the clearing delivers other banks' customers' SEPA credit transfers to the
  institution's accounts (`interbank_credits`: applied, or returned with TX's pacs.004); one
  with a SEPA Instant transfer is refused whole (the clearing offers those in real time:
  `instant_credits`);
- a **pacs.004** of the clearing returns an interbank profile's transfer, or refunds or returns
  its collection (`returns.order_return`, as a camt.054's return: once, never refused, a spent
  collection's rest to returns receivable; an order still `sent` settled first, the return
  saying the clearing settled it); one with reason FOCR is the money of an accepted recall, as a
  camt.054's FOCR is (`recalls`).

The pacs messages name an order by its end-to-end id and the transaction id TX gave it (its
trace number), of an institution whose profile is `interbank` only (another's: refused whole).

Whatever names an end-to-end id (or a file) TX does not know is recorded (`RailNotice`, no
order) for reconciliation, never an error. IBANs are never written into an error, a notice or
a log line.
"""

import re
from datetime import datetime

from lxml import etree

from ..iso20022 import codes
from ..iso20022.camt054 import read_notification
from ..iso20022.document import safe_parser
from ..iso20022.messages import (
    BY_NAMESPACE,
    CAMT_029,
    CAMT_054,
    CAMT_056,
    PACS_002,
    PACS_003,
    PACS_004,
    PACS_008,
    PAIN_002,
)
from ..iso20022.pacs002 import read_status_report as read_interbank_status_report
from ..iso20022.pacs004 import read_return
from ..iso20022.pacs008 import read_transfers
from ..iso20022.pain002 import read_status_report
from ..models import (
    SEPA_RAILS,
    InboundEntry,
    PaymentOrder,
    Rail,
    RailFile,
    RailNotice,
    SepaProfile,
)
from ..sepa import EUR
from .inbound_debits import inbound_debits_receive
from .inbound_recalls import inbound_recalls_receive, recalled_credit_booked
from .instant_answers import instant_status
from .interbank_credits import interbank_credits_receive
from .recalls import recall_answers, recall_money_back
from .returns import order_return, unknown_return
from .sepa_inbound import Credit, instant_credits_booked, remittance_text, sepa_credit_receive
from .settlement import order_settle

Status = PaymentOrder.Status
# A rejection without a reason code: the bank's own (EPC: MS03, reason not specified).
UNSPECIFIED = "MS03"
# A return following a recall (camt.056) the beneficiary's bank accepted.
RECALLED = "FOCR"
# A clearing's transaction status: accepted, settlement completed.
CLEARED = "ACSC"
_IBAN = re.compile(r"\b[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}\b")


class SepaRefused(Exception):  # noqa: N818 (reads as what happened)
    pass


def redacted(message: str) -> str:
    """`message` with anything shaped like an IBAN masked (a validator quotes the value it
    refuses)."""
    return _IBAN.sub("[IBAN]", message)


def sepa_file_apply(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Apply a SEPA document (module docstring) in the caller's transaction; return how many
    transactions it named. `Iso20022Error` or `SepaRefused`: refused whole."""
    message = _message_of(content)
    if message is PAIN_002:
        return _status_report(rail_file, content, now)
    if message is CAMT_029:
        return recall_answers(rail_file, content, now)
    if message is CAMT_056:
        if not SepaProfile.objects.filter(institution=rail_file.institution).exists():
            raise SepaRefused(
                "a camt.056 recall of a SEPA credit, and the institution has no SEPA profile"
            )
        return inbound_recalls_receive(rail_file, content, now)
    if message in (PACS_002, PACS_003, PACS_004, PACS_008):
        profile = SepaProfile.objects.filter(institution=rail_file.institution).first()
        if profile is None or profile.kind != SepaProfile.Kind.INTERBANK:
            raise SepaRefused(
                f"{message.name}: a message of the clearing, and the institution is not in it "
                "(its SEPA profile is not interbank)"
            )
        if message is PACS_002:
            return _clearing_status_report(rail_file, content, now)
        if message is PACS_003:
            return inbound_debits_receive(rail_file, content, now)
        if message is PACS_008:
            return _interbank_credits(rail_file, content, now)
        return _clearing_returns(rail_file, content, now)
    return _notification(rail_file, content, now)


def _message_of(content: bytes):
    try:
        root = etree.fromstring(content, safe_parser())
    except etree.XMLSyntaxError:
        return PAIN_002  # its reader refuses it, with the parser's message
    found = BY_NAMESPACE.get(etree.QName(root).namespace or "")
    if found not in (
        PAIN_002,
        CAMT_054,
        CAMT_029,
        CAMT_056,
        PACS_002,
        PACS_003,
        PACS_004,
        PACS_008,
    ):
        name = found.name if found else "not an ISO 20022 document TX reads"
        raise SepaRefused(
            f"{name}: the bank's SEPA files TX reads are pain.002 status reports, camt.054 "
            "notifications, camt.029 answers to recalls and camt.056 recalls, and the "
            "clearing's pacs.002 status reports, pacs.004 returns, pacs.003 direct debits and "
            "pacs.008 credit transfers"
        )
    return found


def _order_of(institution, end_to_end_id: str | None) -> PaymentOrder | None:
    if not end_to_end_id:
        return None
    return (
        PaymentOrder.objects.filter(
            institution=institution, end_to_end_id=end_to_end_id, rail__in=SEPA_RAILS
        )
        .select_related("institution")
        .first()
    )


def _reason_of(reasons) -> codes.Reason:
    coded = [each.code for each in reasons if not each.proprietary]
    return codes.reason(coded[0] if coded else UNSPECIFIED)


def _booked_amount(entry, transaction) -> tuple[int, str] | None:
    """What the bank booked for one transaction: its own amount, or its entry's when it is the
    entry's only one; None when the notification does not say."""
    if transaction.amount is not None:
        return transaction.amount, transaction.currency
    if len(entry.transactions) == 1:
        return entry.amount, entry.currency
    return None


def _rejected(rail_file: RailFile, order, reason: codes.Reason, end_to_end_id: str, now) -> None:
    """A transaction the bank (or the clearing) rejected: its order's rejection
    (`order_return`), or, when TX has no such order, a notice for reconciliation."""
    if order is None:
        unknown_return(
            institution=rail_file.institution,
            reason=reason,
            trace=end_to_end_id[:35],
            rail_file=rail_file,
            kind=RailNotice.Kind.REJECT,
        )
    else:
        order_return(
            order=order, reason=reason, rail_file=rail_file, at=now, kind=RailNotice.Kind.REJECT
        )


def _instant_answered(rail_file: RailFile, order, status: str, reasons, now: datetime) -> bool:
    """SEPA Instant's answer, a pain.002's or a pacs.002's alike: the order settled or rejected
    at once (`instant_answers.instant_status`); False when `order` is not an instant one."""
    if order is None or order.rail != Rail.SEPA_INST:
        return False
    instant_status(
        order=order, status=status, reason=_reason_of(reasons), rail_file=rail_file, now=now
    )
    return True


def _notice(rail_file, kind, code, reason, reference, order=None) -> RailNotice:
    return RailNotice.objects.create(
        institution=rail_file.institution,
        file=rail_file,
        kind=kind,
        code=code[:4],
        reason=reason[:48],
        original_trace_number=(reference or "")[:35],
        order=order,
    )


# --- pain.002 ------------------------------------------------------------------------------------


def _status_report(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Each transaction's status first (its own reason); then a message or payment instruction
    rejected whole rejects the orders of TX's file that no transaction status named."""
    report = read_status_report(content)
    institution = rail_file.institution
    count = 0
    rejected_whole = []
    if report.group_status == codes.REJECTED:
        rejected_whole.append(report.reasons)
    for payment in report.payments:
        if payment.status == codes.REJECTED:
            rejected_whole.append(payment.reasons or report.reasons)
        for transaction in payment.transactions:
            count += 1
            order = _order_of(institution, transaction.original_end_to_end_id)
            reasons = transaction.reasons or payment.reasons or report.reasons
            if _instant_answered(rail_file, order, transaction.status, reasons, now):
                pass
            elif transaction.status == codes.REJECTED:
                reason = _reason_of(reasons)
                _rejected(rail_file, order, reason, transaction.original_end_to_end_id, now)
            elif order is None:
                status = transaction.status
                accepted = status in codes.ACCEPTED
                _notice(
                    rail_file,
                    RailNotice.Kind.STATUS,
                    status,
                    "accepted" if accepted else codes.STATUSES.get(status, "unknown_status"),
                    transaction.original_end_to_end_id,
                )
    if rejected_whole:
        named = {each.original_end_to_end_id for each in report.transactions()}
        count += _file_rejected(
            rail_file, report.original_message_id, rejected_whole[0], named, now
        )
    return count


def _file_rejected(
    rail_file: RailFile, message_id: str, reasons, named: set[str], now: datetime
) -> int:
    """Every order still on its way of TX's file whose pain.001 `message_id` names (its id,
    `-` for `_`), and whose end-to-end id no transaction status `named`, rejected; a message id
    of no file of the institution's (nor of an order left): recorded."""
    reason = _reason_of(reasons)
    institution = rail_file.institution
    orders = list(
        PaymentOrder.objects.filter(
            institution=institution,
            file_id=message_id.replace("-", "_"),
            file__direction=RailFile.Direction.OUTBOUND,
            status__in=[Status.SCHEDULED, Status.SENT],
        )
        .exclude(end_to_end_id__in=named)
        .order_by("pk")
    )
    known = RailFile.objects.filter(
        institution=institution,
        pk=message_id.replace("-", "_"),
        direction=RailFile.Direction.OUTBOUND,
    ).exists()
    if not known:
        _notice(rail_file, RailNotice.Kind.REJECT, reason.code, reason.normalized, message_id)
        return 0
    for order in orders:
        if order.rail == Rail.SEPA_INST:
            instant_status(
                order=order, status=codes.REJECTED, reason=reason, rail_file=rail_file, now=now
            )
            continue
        order_return(
            order=order, reason=reason, rail_file=rail_file, at=now, kind=RailNotice.Kind.REJECT
        )
    return len(orders)


# --- camt.054 ------------------------------------------------------------------------------------


def _notification(rail_file: RailFile, content: bytes, now: datetime) -> int:
    notification = read_notification(content)
    institution = rail_file.institution
    profile = SepaProfile.objects.filter(institution=institution).first()
    if profile is None or not profile.settlement_iban:
        raise SepaRefused("a camt.054 notification, and the institution has no SEPA account")
    count = 0
    for account in notification.notifications:
        if account.account_iban != profile.settlement_iban:
            raise SepaRefused(
                f"notification {account.id}: names an account that is not the institution's "
                "SEPA settlement account"
            )
        for entry in account.entries:
            for transaction in entry.transactions:
                count += 1
                _transaction(rail_file, profile, entry, transaction, now)
    return count


def _transaction(rail_file: RailFile, profile, entry, transaction, now: datetime) -> None:
    institution = rail_file.institution
    reference = transaction.end_to_end_id or transaction.account_servicer_reference or ""
    order = _order_of(institution, transaction.end_to_end_id)
    if transaction.return_reason is not None:
        reason = codes.reason(transaction.return_reason.code)
        if (
            order is None
            and entry.direction == "debit"
            and reason.code == RECALLED
            and recalled_credit_booked(
                institution, transaction.end_to_end_id, _booked_amount(entry, transaction)
            )
        ):
            return  # a credit TX gave back on a recall, leaving the settlement account
        if order is None:
            unknown_return(
                institution=institution,
                reason=reason,
                trace=reference[:35],
                rail_file=rail_file,
                kind=RailNotice.Kind.RETURN,
            )
        else:
            booked = _booked_amount(entry, transaction)
            order_return(
                order=order,
                reason=reason,
                rail_file=rail_file,
                at=now,
                amount=booked[0] if booked and booked[1] == order.currency else None,
            )
            if reason.code == RECALLED:
                recall_money_back(order, rail_file, now)
        return
    # A credit transfer is booked as a debit of the settlement account, a direct debit as a
    # credit to it.
    expected = "credit" if order is not None and order.rail == Rail.SEPA_DD else "debit"
    booked = entry.status == "BOOK" and entry.direction == expected and not entry.reversal
    if order is not None and booked:
        if _booked_amount(entry, transaction) not in (None, (order.amount, order.currency)):
            # The bank booked another sum than the order's: a break for reconciliation, and the
            # order waits `sent` (it never settles at a sum it was not sent for).
            _notice(
                rail_file,
                RailNotice.Kind.BOOKING,
                entry.status,
                "amount_mismatch",
                reference,
                order=order,
            )
        elif order.status == Status.SENT:
            order_settle(order=order, at=now)
        return
    creditor = transaction.creditor_iban
    if (
        profile.iban_bank_code  # it issues IBANs: a credit for another account is for one of them
        and entry.status == "BOOK"
        and entry.direction == "credit"
        and not entry.reversal
        and creditor is not None
        and creditor != profile.settlement_iban
    ):
        _credit_received(rail_file, profile, entry, transaction, now)
        return
    if order is None:
        # Money that moved on the account and names nothing TX sent: for reconciliation.
        _notice(
            rail_file,
            RailNotice.Kind.BOOKING,
            entry.status,
            f"unknown_{entry.direction}",
            reference,
        )


def _credit_received(rail_file: RailFile, profile, entry, transaction, now: datetime) -> None:
    """A credit booked for one of the institution's accounts, named by its IBAN (an unknown
    one too: its money is on the settlement account all the same): `sepa_inbound`. Without a
    reference it could be told again by, or an amount: recorded, for reconciliation."""
    booked = _booked_amount(entry, transaction)
    reference = transaction.account_servicer_reference or (
        entry.account_servicer_reference if len(entry.transactions) == 1 else None
    )
    accepted = instant_credits_booked(
        profile, transaction.transaction_id, transaction.debtor_agent_bic
    )
    if accepted:
        # The partner bank booking an instant credit TX accepted (and applied) already: its
        # money, not a new credit. Only one, of the same amount, is that; anything else is
        # for reconciliation, and nothing moves twice.
        if len(accepted) > 1 or booked != (accepted[0].amount, accepted[0].currency):
            _notice(
                rail_file,
                RailNotice.Kind.BOOKING,
                entry.status,
                "instant_credit_unclear",
                transaction.end_to_end_id or reference,
            )
        return
    if booked is None or not reference:
        missing = "amount" if booked is None else "reference"
        _notice(
            rail_file,
            RailNotice.Kind.BOOKING,
            entry.status,
            f"credit_without_{missing}",
            transaction.end_to_end_id or reference,
        )
        return
    amount, currency = booked
    if currency != EUR:
        raise SepaRefused(f"a credit in {currency[:3]} to an account: SEPA credits are in EUR")
    remittance = transaction.remittance
    sepa_credit_receive(
        profile=profile,
        rail_file=rail_file,
        credit=Credit(
            reference=reference,
            amount=amount,
            currency=currency,
            iban=transaction.creditor_iban,
            debtor_name=transaction.debtor_name or "",
            end_to_end_id=transaction.end_to_end_id or "",
            remittance_info=remittance_text(remittance),
            settlement_date=entry.value_date or entry.booking_date or now.date(),
        ),
        at=now,
        refused=InboundEntry.Status.SUSPENSE,
    )


# --- pacs.008: other banks' credit transfers to an interbank profile's accounts ---------------


def _interbank_credits(rail_file: RailFile, content: bytes, now: datetime) -> int:
    message = read_transfers(content)
    if any(transfer.instant for transfer in message.transfers):
        raise SepaRefused(
            f"pacs.008 {message.header.message_id}: a SEPA Instant transfer in a file (the "
            "clearing offers instant credits in real time, for TX to answer at once)"
        )
    return interbank_credits_receive(rail_file, message, now)


# --- pacs.002 and pacs.004: the clearing's answers to an interbank profile's pacs.008, pacs.003 -


def _interbank_order_of(institution, end_to_end_id: str, transaction_id: str):
    """The credit transfer (instant or not) or collection a clearing's answer names: its
    end-to-end id and the transaction id TX gave it in the pacs.008 or pacs.003 (its trace
    number); None when either is not the order's."""
    order = _order_of(institution, end_to_end_id)
    if order is None or order.trace_number != transaction_id:
        return None
    return order


def _clearing_status_report(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Each transaction's status: ACSC settles its `sent` order (at the amount it was sent for:
    another amount is a break for reconciliation, nothing moves), RJCT rejects it with its
    reason (`order_return`, as a pain.002's; an instant order's as a pain.002's too,
    `_instant_answered`), another status (ACCP, PDNG...) moves nothing. Then a message
    rejected whole rejects the orders of TX's file no status named."""
    report = read_interbank_status_report(content)
    institution = rail_file.institution
    for transaction in report.transactions:
        end_to_end_id = transaction.original_end_to_end_id
        order = _interbank_order_of(institution, end_to_end_id, transaction.original_transaction_id)
        status = transaction.status
        reasons = transaction.reasons or report.reasons
        if (
            status == CLEARED
            and order is not None
            and transaction.original_amount not in (None, order.amount)
        ):
            _notice(
                rail_file, RailNotice.Kind.STATUS, status, "amount_mismatch", end_to_end_id, order
            )
        elif _instant_answered(rail_file, order, status, reasons, now):
            pass
        elif status == codes.REJECTED:
            _rejected(rail_file, order, _reason_of(reasons), end_to_end_id, now)
        elif order is None:
            accepted = status in codes.ACCEPTED
            _notice(
                rail_file,
                RailNotice.Kind.STATUS,
                status,
                "accepted" if accepted else codes.STATUSES.get(status, "unknown_status"),
                end_to_end_id,
            )
        elif status == CLEARED:
            order_settle(order=order, at=now)
    count = len(report.transactions)
    if report.group_status == codes.REJECTED:
        named = {each.original_end_to_end_id for each in report.transactions}
        count += _file_rejected(rail_file, report.original_message_id, report.reasons, named, now)
    return count


def _clearing_returns(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Each returned transaction booked on its order (`order_return`: once, never refused;
    what came back when less than the order's amount, the returning bank's charges; FOCR, an
    accepted recall's money, accepts the recall still waiting); a return of a transfer TX does
    not know recorded for reconciliation."""
    message = read_return(content)
    institution = rail_file.institution
    for transaction in message.transactions:
        reason = _reason_of((transaction.reason,))
        order = _interbank_order_of(
            institution, transaction.original_end_to_end_id, transaction.original_transaction_id
        )
        if order is None:
            unknown_return(
                institution=institution,
                reason=reason,
                trace=transaction.original_end_to_end_id[:35],
                rail_file=rail_file,
                kind=RailNotice.Kind.RETURN,
            )
            continue
        if order.status == Status.SENT:
            # Returned money was settled money: the clearing's return came before (or
            # without) its status report, which would change nothing after it. An instant
            # order's money is still held: settled as its ACSC would.
            if not _instant_answered(rail_file, order, CLEARED, (), now):
                order_settle(order=order, at=now)
        order_return(
            order=order,
            reason=reason,
            rail_file=rail_file,
            at=now,
            amount=transaction.returned_amount,
        )
        if reason.code == RECALLED:
            recall_money_back(order, rail_file, now)
    return len(message.transactions)
