"""What staff do to payments (docs/payments.md, "The back office"): approve or cancel a payment
order waiting for its cut-off, verify an external account by other means than a prenote, and
place an inbound credit waiting in suspense (four eyes: applied to an account or returned, each
asked by one staff user and approved by another)."""

from django import forms

from accounts.models import Account
from backoffice.actions.base import Confirmation, LeftOut, Reason, StaffAction, said
from backoffice.actions.four_eyes import INBOUND_APPLY, INBOUND_RETURN
from backoffice.kit import reason_field
from core.money import money
from payments.models import ExternalAccount, InboundEntry, PaymentOrder
from payments.nacha.codes import RETURN_REASONS
from payments.services.external_accounts import external_account_verify
from payments.services.inbound import inbound_entry_apply, inbound_entry_return
from payments.services.orders import payment_order_approve, payment_order_cancel

REASON_KEPT = "Written in the admin history with the action."


def order_row(order: PaymentOrder) -> dict:
    return {
        "order": order,
        "amount": money(order.amount, order.currency),
        "external": str(order.external_account),
    }


approve_orders = StaffAction(
    name="approve_orders",
    label="Approve selected payment orders (the key asked, you approve; asks for a reason)",
    model=PaymentOrder,
    service=payment_order_approve,
    arguments=lambda order, asked: {"order": order},  # the staff user: `operations.run`'s actor
    reason=Reason(help_text=REASON_KEPT),
    confirmation=Confirmation(
        template="admin/payments/paymentorder/order_confirmation.html",
        title="Approve payment orders",
        submit="Approve {n} order(s)",
        rows=order_row,
        context={"verb": "Approve"},
    ),
    left_out=LeftOut(
        which=lambda order: order.status != PaymentOrder.Status.NEEDS_APPROVAL,
        said=lambda orders: [
            "Not waiting for approval, left as they were: "
            + ", ".join(order.pk for order in orders)
            + "."
        ],
    ),
    select_related=("external_account",),
    history=lambda outcome, asked: f"Approved (admin action “Approve”; {said(asked.reason)}).",
    done="Approved {n} payment order(s): each goes out with its next cut-off.",
    already="Not approved, left as they were: {ids}.",
)

cancel_orders = StaffAction(
    name="cancel_orders",
    label="Cancel selected payment orders not yet in a file (a credit's hold released)",
    model=PaymentOrder,
    service=payment_order_cancel,
    arguments=lambda order, asked: {"order": order, "reason": asked.reason},
    reason=Reason(help_text="Kept on the order (its endedReason) and in the admin history."),
    confirmation=Confirmation(
        template="admin/payments/paymentorder/order_confirmation.html",
        title="Cancel payment orders",
        submit="Cancel {n} order(s)",
        rows=order_row,
        context={"verb": "Cancel"},
    ),
    select_related=("external_account",),
    history=lambda outcome, asked: (
        f"Cancelled, was {outcome.previous} (admin action “Cancel”; {said(asked.reason)})."
    ),
    done="Cancelled {n} payment order(s).",
    already="Not cancelled, left as they were: {ids}.",
)

verify_external_accounts = StaffAction(
    name="verify_external_accounts",
    label="Verify selected external accounts (checked by other means than a prenote)",
    model=ExternalAccount,
    service=external_account_verify,
    arguments=lambda external, asked: {"external": external, "by": "staff"},
    reason=Reason(help_text="What was checked (a statement, a call): " + REASON_KEPT),
    confirmation=Confirmation(
        template="admin/payments/externalaccount/verify_confirmation.html",
        title="Verify external accounts",
        submit="Verify {n} external account(s)",
    ),
    history=lambda outcome, asked: f"Verified by staff ({said(asked.reason)}).",
    done="Verified {n} external account(s).",
    already="Verified already, left as they were: {ids}.",
)


# --- the suspense queue: four eyes ------------------------------------------------------------
class SuspenseApplyForm(forms.Form):
    """The account a credit in suspense is for, one of the entry's institution's customer
    accounts (`account` in the cleaned data)."""

    account_id = forms.CharField(
        max_length=40,
        label="Account id",
        help_text="The customer account (acc_…) the credit is for, found by the name or the "
        "account's last four in the entry.",
    )
    reason = reason_field(
        "How the account was found (the originator's call, the receiver's name): kept on the "
        "request for the approver."
    )

    def __init__(self, *args, institution_id: str, found_by: str = "", reason: str = "", **kwargs):
        """`found_by` and `reason`: the account's and the reason's help, where the credit is
        not an inbound entry's (a reconciliation break's)."""
        super().__init__(*args, **kwargs)
        self.institution_id = institution_id
        if found_by:
            account = self.fields["account_id"]
            account.help_text = f"The customer account (acc_…) the credit is for, {found_by}."
        if reason:
            self.fields["reason"].help_text = reason

    def clean(self):
        data = super().clean()
        account = Account.objects.filter(
            pk=(data.get("account_id") or "").strip(),
            institution_id=self.institution_id,
            kind=Account.Kind.CUSTOMER,
        ).first()
        if account is None:
            self.add_error("account_id", "No customer account of this institution has this id.")
        data["account"] = account
        return data


class SuspenseReturnForm(forms.Form):
    code = forms.ChoiceField(
        choices=[
            (code, f"{code} {reason.title}")
            for code, reason in RETURN_REASONS.items()
            if code in ("R03", "R04", "R17", "R23", "R20")
        ],
        initial="R03",
        label="Return reason",
    )
    reason = reason_field("Why it cannot be applied: kept on the request for the approver.")


def inbound_row(inbound: InboundEntry) -> dict:
    return {
        "inbound": inbound,
        "amount": money(inbound.amount, inbound.currency),
        "last4": inbound.account_number_last4,
    }


IN_SUSPENSE = LeftOut(
    which=lambda inbound: inbound.status != InboundEntry.Status.SUSPENSE,
    said=lambda entries: [
        "Not in suspense, left as they were: " + ", ".join(e.pk for e in entries) + "."
    ],
)

apply_from_suspense = StaffAction(
    name="apply_from_suspense",
    label="Apply to an account (a credit in suspense; another staff user approves)",
    model=InboundEntry,
    service=inbound_entry_apply,
    four_eyes=INBOUND_APPLY,
    arguments=lambda inbound, asked: {
        "inbound": inbound,
        "account": asked["account"],
        "reason": asked.reason,
    },
    reason=Reason(),
    form=lambda data, entries: SuspenseApplyForm(data, institution_id=entries[0].institution_id),
    confirmation=Confirmation(
        template="admin/payments/inboundentry/suspense_confirmation.html",
        title="Apply an inbound credit to an account",
        submit="Ask for approval",
        rows=inbound_row,
    ),
    one="inbound entry to apply",
    left_out=IN_SUSPENSE,
    verb="Apply from suspense",
    made=lambda inbound, asked: f"Applied {money(inbound.amount, inbound.currency)}",
    already="Nothing asked: {ids}.",
)

return_from_suspense = StaffAction(
    name="return_from_suspense",
    label="Return to the originator (a credit in suspense; another staff user approves)",
    model=InboundEntry,
    service=inbound_entry_return,
    four_eyes=INBOUND_RETURN,
    arguments=lambda inbound, asked: {
        "inbound": inbound,
        "code": asked["code"],
        "reason": asked.reason,
    },
    reason=Reason(),
    form=lambda data, entries: SuspenseReturnForm(data),
    confirmation=Confirmation(
        template="admin/payments/inboundentry/suspense_confirmation.html",
        title="Return an inbound credit",
        submit="Ask for approval",
        rows=inbound_row,
    ),
    one="inbound entry to return",
    left_out=IN_SUSPENSE,
    verb="Return from suspense",
    made=lambda inbound, asked: f"Returned {money(inbound.amount, inbound.currency)}",
    already="Nothing asked: {ids}.",
)
