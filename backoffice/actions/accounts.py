"""What staff do to the accounts side: release holds (docs/back-office.md, "Actions on a
page")."""

from django.contrib import messages

from accounts.models import Hold
from accounts.services import hold_release
from backoffice.actions.base import Confirmation, LeftOut, Reason, StaffAction, said
from core.money import money

# Where an action's reason is kept: the services and their events take none (docs/back-office.md,
# "Actions on a page").
REASON_KEPT = "Written in the admin history with the action."

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
