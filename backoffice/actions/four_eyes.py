"""Four eyes as a property of a staff action (docs/back-office.md, "Four eyes").

A policy names the approval kind the back office already has (`ApprovalRequest.Kind`), the
entry of `backoffice.services.staff_changes` that decides it (the change made at once by the
staff user within the institution's threshold, else asked for: an `ApprovalRequest` another
staff user approves, `backoffice.services.approvals`) and the domain service that makes the
change, at once or once approved. A `StaffAction(service=card_pin_unblock,
four_eyes=PIN_UNBLOCK)` runs `staff_unblock_pin`; no admin is subclassed for it.

Here too: the words of a staff change of money, in the admin history and the messages, and of
an approval request (`asked_for`, what it asks, shown on its page and its decision's).
"""

from collections.abc import Callable
from dataclasses import dataclass

from accounts.services import account_set_overdraft_limit, adjustment_create, fee_waive
from backoffice.forms import CARD_LIMIT_LABELS
from backoffice.models import ApprovalRequest
from backoffice.services.staff_changes import (
    StaffChange,
    staff_adjust,
    staff_apply_inbound,
    staff_book_break,
    staff_place_break,
    staff_return_inbound,
    staff_set_card_limits,
    staff_set_overdraft_limit,
    staff_unblock_pin,
    staff_waive_fee,
)
from cards.services import card_limits_set, card_pin_unblock
from core.money import money
from payments.services.inbound import inbound_entry_apply, inbound_entry_return
from reconciliation.services.breaks import break_book, break_place
from reconciliation.services.force_post import network_only_force_post

Kind = ApprovalRequest.Kind


@dataclass(frozen=True)
class FourEyes:
    """The four-eyes policy of an action: `kind` of approval, decided by `through` (a
    `staff_changes` entry, taking the action's arguments), making `makes`'s change."""

    kind: str
    through: Callable
    makes: Callable


ADJUSTMENT = FourEyes(Kind.ADJUSTMENT, staff_adjust, adjustment_create)
FEE_WAIVER = FourEyes(Kind.FEE_WAIVER, staff_waive_fee, fee_waive)
OVERDRAFT_RAISE = FourEyes(
    Kind.OVERDRAFT_RAISE, staff_set_overdraft_limit, account_set_overdraft_limit
)
CARD_LIMITS_RAISE = FourEyes(Kind.CARD_LIMITS_RAISE, staff_set_card_limits, card_limits_set)
PIN_UNBLOCK = FourEyes(Kind.PIN_UNBLOCK, staff_unblock_pin, card_pin_unblock)
INBOUND_APPLY = FourEyes(Kind.INBOUND_APPLY, staff_apply_inbound, inbound_entry_apply)
INBOUND_RETURN = FourEyes(Kind.INBOUND_RETURN, staff_return_inbound, inbound_entry_return)
BREAK_CREDIT = FourEyes(Kind.BREAK_CREDIT, staff_book_break, break_book)
BREAK_FEE = FourEyes(Kind.BREAK_FEE, staff_book_break, break_book)
BREAK_FORCE_POST = FourEyes(Kind.BREAK_FORCE_POST, staff_book_break, network_only_force_post)
BREAK_PLACE = FourEyes(Kind.BREAK_PLACE, staff_place_break, break_place)


def asked_for(approval: ApprovalRequest) -> str:
    """What a request asks for, in words, its money shown by `core.money.money`."""
    amount = money(approval.amount, approval.currency)
    parameters = approval.parameters
    if approval.kind == Kind.ADJUSTMENT:
        verb = "Load (credit)" if parameters["direction"] == "credit" else "Unload (debit)"
        description = parameters.get("description") or "no description"
        return f"{verb} of {amount}: “{description}”"
    if approval.kind == Kind.FEE_WAIVER:
        return f"Waive the fee of {amount}"
    if approval.kind == Kind.OVERDRAFT_RAISE:
        return f"Raise the overdraft limit to {amount}"
    if approval.kind == Kind.CARD_LIMITS_RAISE:
        limits = ", ".join(
            f"{CARD_LIMIT_LABELS[field].lower()} {money(value, approval.currency)}"
            for field, value in parameters["limits"].items()
        )
        return f"Set the card's limits: {limits}"
    if approval.kind == Kind.INBOUND_APPLY:
        return f"Apply the inbound credit of {amount} to account {parameters['account_id']}"
    if approval.kind == Kind.INBOUND_RETURN:
        return f"Return the inbound credit of {amount} ({parameters['code']})"
    if approval.kind == Kind.BREAK_CREDIT:
        return (
            f"Book the bank-only credit of {amount} to suspense (reconciliation break "
            f"{approval.target_id})"
        )
    if approval.kind == Kind.BREAK_FEE:
        return f"Book the bank fee of {amount} (reconciliation break {approval.target_id})"
    if approval.kind == Kind.BREAK_PLACE:
        return (
            f"Place the bank-only credit of {amount} from suspense on account "
            f"{parameters['account_id']} (reconciliation break {approval.target_id})"
        )
    if approval.kind == Kind.BREAK_FORCE_POST:
        return (
            f"Force post the late presentment of {amount} the network settled (reconciliation "
            f"break {approval.target_id})"
        )
    return "Unblock the card's PIN"


def staff_changes_done(outcomes) -> str:
    """The message after staff changes of money: how many were made at once, how many wait."""
    asked = sum(1 for outcome in outcomes if outcome.value.asked)
    made = len(outcomes) - asked
    parts = []
    if made:
        parts.append(
            f"Made {made} change(s) at once (within the institution's approval threshold, or "
            "lowering a limit)."
        )
    if asked:
        parts.append(f"Asked for {asked} change(s): another staff user approves each (Approvals).")
    return " ".join(parts)


def staff_change_described(change: StaffChange, made: str, action: str, reason: str) -> str:
    """The admin history's words for one staff change: what was made (`made`), or asked for."""
    if change.asked:
        return (
            f"Asked for approval: {asked_for(change.approval)} (approval request "
            f"{change.approval.pk}; admin action “{action}”; reason: “{reason}”)."
        )
    return f"{made} (made at once: {change.made}; admin action “{action}”; reason: “{reason}”)."
