"""What staff do to reconciliation breaks (docs/reconciliation.md, "Breaks"): work them as cases
(notes, assignment: assigning one moves it `open -> assigned`), book the bank's money of one
or force post a network-only break's late presentment, place a credit booked to suspense on a
customer account (four eyes: a bank-only credit to suspense, a bank fee, a force post, a
placement; asked by one staff user, approved by another under "Approvals") and resolve one
whose amount is 0 (one person, a reason).

Who: `operations` (`reconciliation.change_reconciliationbreak`,
reconciliation/migrations/0011_staff_roles_breaks.py)."""

from backoffice.actions.base import Confirmation, LeftOut, Reason, StaffAction, said
from backoffice.actions.cases import case_actions
from backoffice.actions.four_eyes import BREAK_CREDIT, BREAK_FEE, BREAK_FORCE_POST, BREAK_PLACE
from backoffice.actions.payments import SuspenseApplyForm
from backoffice.models import ApprovalRequest
from core.money import money
from reconciliation.models import OPEN_STATES, ReconciliationBreak
from reconciliation.services.breaks import (
    RESOLUTIONS,
    break_book,
    break_place,
    break_resolve_without_money,
)
from reconciliation.services.force_post import network_only_force_post

Kind = ReconciliationBreak.Kind
TEMPLATE = "admin/reconciliation/reconciliationbreak/break_confirmation.html"


def break_row(brk: ReconciliationBreak) -> dict:
    line = brk.statement_line
    return {
        "break": brk,
        "amount": money(brk.amount, brk.currency),
        "value_date": "—" if line is None else (line.value_date or line.booking_date),
    }


def settled_row(brk: ReconciliationBreak) -> dict:
    """A network-only break's row: what the network settled, under which id."""
    row = brk.settlement_row
    return {
        "break": brk,
        "amount": money(brk.amount, brk.currency),
        "row": "—" if row is None else f"{row.kind} {row.network_transaction_id}",
        "settlement_date": "—" if brk.settlement is None else brk.settlement.settlement_date,
    }


def _left_out(which, words: str) -> LeftOut:
    return LeftOut(
        which=lambda brk: not which(brk),
        said=lambda rows: [f"{words}, left as they were: " + ", ".join(b.pk for b in rows) + "."],
    )


def _credit(brk) -> bool:
    return brk.state in OPEN_STATES and brk.kind == Kind.BANK_ONLY and brk.amount > 0


def _fee(brk) -> bool:
    return (
        brk.state in OPEN_STATES
        and brk.kind in (Kind.BANK_ONLY, Kind.AMOUNT_MISMATCH)
        and brk.amount < 0
    )


book_credit = StaffAction(
    name="book_credit",
    label="Book a bank-only credit to suspense (another staff user approves)",
    model=ReconciliationBreak,
    service=break_book,
    four_eyes=BREAK_CREDIT,
    arguments=lambda brk, asked: {
        "brk": brk,
        "kind": ApprovalRequest.Kind.BREAK_CREDIT,
        "reason": asked.reason,
    },
    reason=Reason(help_text="What the money is (kept on the request for the approver)."),
    confirmation=Confirmation(
        template=TEMPLATE,
        title="Book a bank-only credit to suspense",
        submit="Ask for approval",
        rows=break_row,
        context={"what": "credit"},
    ),
    one="break to book",
    left_out=_left_out(_credit, "Not an open bank-only credit"),
    select_related=("statement_line",),
    verb="Book a bank-only credit",
    made=lambda brk, asked: f"Booked {money(brk.amount, brk.currency)} to suspense",
    already="Nothing asked: {ids}.",
)

book_fee = StaffAction(
    name="book_fee",
    label="Book a bank fee (another staff user approves)",
    model=ReconciliationBreak,
    service=break_book,
    four_eyes=BREAK_FEE,
    arguments=lambda brk, asked: {
        "brk": brk,
        "kind": ApprovalRequest.Kind.BREAK_FEE,
        "reason": asked.reason,
    },
    reason=Reason(help_text="What the bank charged for (kept on the request for the approver)."),
    confirmation=Confirmation(
        template=TEMPLATE,
        title="Book a bank fee",
        submit="Ask for approval",
        rows=break_row,
        context={"what": "fee"},
    ),
    one="break to book",
    left_out=_left_out(_fee, "Not an open break the bank took money on"),
    select_related=("statement_line",),
    verb="Book a bank fee",
    made=lambda brk, asked: f"Booked a bank fee of {money(-brk.amount, brk.currency)}",
    already="Nothing asked: {ids}.",
)

force_post = StaffAction(
    name="force_post",
    label="Force post a late presentment (another staff user approves)",
    model=ReconciliationBreak,
    service=network_only_force_post,
    four_eyes=BREAK_FORCE_POST,
    arguments=lambda brk, asked: {
        "brk": brk,
        "kind": ApprovalRequest.Kind.BREAK_FORCE_POST,
        "reason": asked.reason,
    },
    reason=Reason(
        help_text="Why TX clears what the network settled (kept on the request for the approver)."
    ),
    confirmation=Confirmation(
        template=TEMPLATE,
        title="Force post a late presentment",
        submit="Ask for approval",
        rows=settled_row,
        context={"what": "force_post"},
    ),
    one="break to force post",
    left_out=_left_out(
        lambda brk: brk.state in OPEN_STATES and brk.kind == Kind.NETWORK_ONLY,
        "Not an open network-only break (a late presentment)",
    ),
    select_related=("settlement_row", "settlement"),
    verb="Force post a late presentment",
    made=lambda brk, asked: (
        f"Force posted the late presentment of {money(-brk.amount, brk.currency)}"
    ),
    already="Nothing asked: {ids}.",
)

place_credit = StaffAction(
    name="place_credit",
    label="Place a credit booked to suspense on an account (another staff user approves)",
    model=ReconciliationBreak,
    service=break_place,
    four_eyes=BREAK_PLACE,
    arguments=lambda brk, asked: {
        "brk": brk,
        "account": asked["account"],
        "reason": asked.reason,
    },
    reason=Reason(),
    form=lambda data, breaks: SuspenseApplyForm(
        data,
        institution_id=breaks[0].institution_id,
        found_by="found by the sender's name or the remittance on the statement line",
        reason="How the account was found (the sender's call, the remittance): kept on the "
        "request for the approver.",
    ),
    confirmation=Confirmation(
        template=TEMPLATE,
        title="Place a credit from suspense on an account",
        submit="Ask for approval",
        rows=break_row,
        context={"what": "place"},
    ),
    one="break whose credit to place",
    left_out=_left_out(
        lambda brk: brk.resolution == RESOLUTIONS["credit"],
        "Not a bank-only credit waiting in suspense",
    ),
    select_related=("statement_line",),
    verb="Place a credit from suspense",
    made=lambda brk, asked: f"Placed {money(brk.amount, brk.currency)} from suspense",
    already="Nothing asked: {ids}.",
)

resolve_without_money = StaffAction(
    name="resolve_without_money",
    label="Resolve selected breaks of amount 0 (no money moves; asks for a reason)",
    model=ReconciliationBreak,
    service=break_resolve_without_money,
    arguments=lambda brk, asked: {"brk": brk},
    reason=Reason(help_text="Why nothing is to be booked: written in the admin history."),
    confirmation=Confirmation(
        template=TEMPLATE,
        title="Resolve breaks without money",
        submit="Resolve {n} break(s)",
        rows=break_row,
        context={"what": "none"},
    ),
    left_out=_left_out(
        lambda brk: brk.state in OPEN_STATES and brk.amount == 0, "Not an open break of amount 0"
    ),
    select_related=("statement_line",),
    history=lambda outcome, asked: (
        f"Resolved without money (admin action “Resolve”; {said(asked.reason)})."
    ),
    done="Resolved {n} break(s).",
    already="Resolved already, left as they were: {ids}.",
)

# Case work: a note, an assignment (`backoffice.actions.cases`; docs/back-office.md, "Case work").
note_breaks, take_breaks, assign_breaks = case_actions(model=ReconciliationBreak, noun="break")
