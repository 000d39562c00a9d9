"""What staff do to the accounts side: freeze, unfreeze and close accounts, release holds
(docs/back-office.md, "Actions on a page"); adjust a balance, change an overdraft limit, waive
fees (four eyes: docs/back-office.md, "Four eyes"); add and change account products
(docs/products.md).

A status change and a release ask for a reason and write it in the admin history only:
`account_set_status` and `hold_release` take none, and their events carry none. A change of
money is made at once within the institution's threshold, else asked for: another staff user
approves it (the change is made then, as them, with this reason)."""

from django.contrib import messages

from accounts.models import Account, AccountProduct, Fee, Hold
from accounts.services import (
    account_product_create,
    account_product_update,
    account_set_overdraft_limit,
    account_set_status,
    adjustment_create,
    fee_waive,
    hold_release,
)
from accounts.services.accounts import TRANSITIONS
from backoffice.actions.base import (
    Confirmation,
    LeftOut,
    Move,
    Reason,
    StaffAction,
    said,
    status_actions,
)
from backoffice.actions.forms import FormWrite, changed_fields, created
from backoffice.actions.four_eyes import ADJUSTMENT, FEE_WAIVER, OVERDRAFT_RAISE
from backoffice.forms import APPROVAL_REASON_HELP, AdjustmentRequestForm, OverdraftLimitForm
from backoffice.kit import masked_account_number
from core.money import money

# Where an action's reason is kept: the services and their events take none (docs/back-office.md,
# "Actions on a page").
REASON_KEPT = "Written in the admin history with the action."

# Each asks for a reason, unfreezing too: lifting a freeze undoes a decision that was taken with
# a reason, so the history says why it was lifted (docs/back-office.md).
freeze_accounts, activate_accounts, close_accounts = status_actions(
    model=Account,
    service=account_set_status,
    noun="account",
    moves=[
        Move(
            "freeze_accounts",
            "Freeze selected accounts (no money can leave them; asks for a reason)",
            Account.Status.FROZEN,
            "Freeze",
            "Froze",
            Reason(help_text=REASON_KEPT),
        ),
        Move(
            "activate_accounts",
            "Unfreeze (activate) selected accounts (asks for a reason)",
            Account.Status.ACTIVE,
            "Unfreeze (activate)",
            "Activated",
            Reason(help_text=REASON_KEPT),
        ),
        Move(
            "close_accounts",
            "Close selected accounts (zero balance and no active hold; final; asks for a reason)",
            Account.Status.CLOSED,
            "Close",
            "Closed",
            Reason(help_text=REASON_KEPT),
        ),
    ],
    arguments=lambda account, status, asked: {"account": account, "status": status},
    template="admin/accounts/account/status_confirmation.html",
    transitions=TRANSITIONS,
    rows=lambda account: {
        "account": account,
        "number": masked_account_number(account),
        "posted": money(account.posted, account.currency),
        "available": money(account.available, account.currency),
    },
    select_related=("customer", "product"),
    left_out=LeftOut(
        which=lambda account: account.is_internal,
        said=lambda accounts: [
            f"{account}: an internal account carries the institution's side of every journal; "
            "its status is not changed here."
            for account in accounts
        ],
    ),
)

release_holds = StaffAction(
    name="release_holds",
    label="Release selected holds (give the amount back; asks for a reason)",
    model=Hold,
    service=hold_release,
    arguments=lambda hold, asked: {"hold": hold},
    reason=Reason(help_text=REASON_KEPT),
    confirmation=Confirmation(
        template="admin/accounts/hold/release_confirmation.html",
        title="Release holds",
        submit="Release {n} hold(s)",
        rows=lambda hold: {
            "hold": hold,
            "amount": money(hold.amount, hold.currency),
            "captured": money(hold.captured_amount, hold.currency),
        },
    ),
    # A hold captured or expired meanwhile is refused by the service.
    left_out=LeftOut(
        which=lambda hold: hold.status != Hold.Status.ACTIVE,
        said=lambda holds: [
            "Only active holds can be released; left as they were: "
            + ", ".join(f"{hold.pk} ({hold.status})" for hold in holds)
            + "."
        ],
        level=messages.WARNING,
    ),
    history=lambda outcome, asked: (
        f"Released {money(outcome.value.amount, outcome.value.currency)} on account "
        f"{outcome.value.account_id} (admin action “Release”; {said(asked.reason)})."
    ),
    done="Released {n} hold(s).",
    already="Already released, left as they were: {ids}.",
)


# --- Four eyes -------------------------------------------------------------------------------
def account_row(account: Account) -> dict:
    """An account on the page of an action that works on one: its balances and limit."""
    return {
        "account": account,
        "posted": money(account.posted, account.currency),
        "available": money(account.available, account.currency),
        "overdraft_limit": money(account.overdraft_limit, account.currency),
    }


def _adjusted(account: Account, asked) -> str:
    verb = "Load (credit)" if asked["direction"] == "credit" else "Unload (debit)"
    return f"{verb} of {money(asked['amount'], account.currency)}"


request_adjustment = StaffAction(
    name="request_adjustment",
    label="Adjust (load or unload; above the threshold another staff user approves)",
    model=Account,
    service=adjustment_create,
    four_eyes=ADJUSTMENT,
    arguments=lambda account, asked: {
        "account": account,
        "direction": asked["direction"],
        "amount": asked["amount"],
        "description": asked["description"],
        "reason": asked.reason,
    },
    # Direction, the amount in the account's currency, the statement line's description, and
    # the reason.
    reason=Reason(),
    form=lambda data, accounts: AdjustmentRequestForm(data, currency=accounts[0].currency),
    confirmation=Confirmation(
        template="admin/accounts/account/adjustment_request.html",
        title="Adjust the balance",
        submit="Adjust, or ask for approval",
        rows=account_row,
    ),
    one="account to adjust",
    applies=lambda account, user: account.status != Account.Status.CLOSED,
    verb="Adjust",
    made=_adjusted,
    already="Nothing asked: {ids}.",
)

change_overdraft_limit = StaffAction(
    name="change_overdraft_limit",
    label="Change the overdraft limit (a raise above the threshold: another staff user approves)",
    model=Account,
    service=account_set_overdraft_limit,
    # A lower limit is set at once (it takes risk away); a raise above the threshold is asked.
    four_eyes=OVERDRAFT_RAISE,
    arguments=lambda account, asked: {
        "account": account,
        "limit": asked["limit"],
        "reason": asked.reason,
    },
    reason=Reason(),
    form=lambda data, accounts: OverdraftLimitForm(data, currency=accounts[0].currency),
    confirmation=Confirmation(
        template="admin/accounts/account/overdraft_limit.html",
        title="Change the overdraft limit",
        submit="Set the limit, or ask for approval",
        rows=account_row,
    ),
    one="account to change the overdraft limit of",
    applies=lambda account, user: account.status != Account.Status.CLOSED,
    verb="Change the overdraft limit",
    made=lambda account, asked: (
        f"Overdraft limit {money(account.overdraft_limit, account.currency)} → "
        f"{money(asked['limit'], account.currency)}"
    ),
    already="The overdraft limit is that already: {ids}.",
)

waive_fees = StaffAction(
    name="waive_fees",
    label="Waive selected fees (asks for a reason; above the threshold another staff user "
    "approves)",
    model=Fee,
    service=fee_waive,
    # One request per fee (the waiver's reason once approved: docs/fees.md); a fee not charged,
    # or one already waiting, is refused by the service.
    four_eyes=FEE_WAIVER,
    arguments=lambda fee, asked: {"fee": fee, "reason": asked.reason},
    reason=Reason(help_text=APPROVAL_REASON_HELP),
    confirmation=Confirmation(
        template="admin/accounts/fee/waive_confirmation.html",
        title="Waive fees",
        submit="Waive {n} fee(s), or ask for approval",
        rows=lambda fee: {"fee": fee, "amount": money(fee.amount, fee.currency)},
    ),
    verb="Waive",
    made=lambda fee, asked: "Waived",
    applies=lambda fee, user: fee.status == Fee.Status.CHARGED,
    already="Nothing asked: {ids}.",
)


# --- Account products: their forms write through the products' services --------------------
# As the API's v2 does: `product.created`, `product.updated` name the staff user.
add_account_product = FormWrite(
    page="add form", model=AccountProduct, service=account_product_create, arguments=created
)
change_account_product = FormWrite(
    page="change form",
    model=AccountProduct,
    service=account_product_update,
    arguments=lambda saving: {"product": saving.obj, "changes": changed_fields(saving)},
)
