"""What staff do to the accounts side: freeze, unfreeze and close accounts, release holds
(docs/back-office.md, "Actions on a page").

Each asks for a reason and writes it in the admin history only: `account_set_status` and
`hold_release` take none, and their events carry none."""

from django.contrib import messages

from accounts.models import Account, Hold
from accounts.services import account_set_status, hold_release
from backoffice.actions.base import (
    Confirmation,
    LeftOut,
    Move,
    Reason,
    StaffAction,
    said,
    status_actions,
)
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
