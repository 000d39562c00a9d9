"""Four eyes where money moves (docs/back-office.md, "Four eyes"): the approval requests and
thresholds, the account's "Adjust" and "Change the overdraft limit", the card's "Change the
limits" and "Unblock the PIN", and the fee's "Waive"."""

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import Account, Fee
from backoffice.actions.approvals import approve_requests, reject_requests
from backoffice.actions.four_eyes import asked_for, staff_change_described, staff_changes_done
from backoffice.admin.accounts import AccountAdmin, FeeAdmin
from backoffice.admin.cards import CardAdmin
from backoffice.forms import (
    APPROVAL_REASON_HELP,
    CARD_LIMIT_LABELS,
    AdjustmentRequestForm,
    ApprovalThresholdForm,
    CardLimitsForm,
    OverdraftLimitForm,
)
from backoffice.kit import (
    CONFIRM,
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ModelAdmin,
    ReasonForm,
    adopt,
    apply_each,
    confirmation_page,
    money_column,
)
from backoffice.models import ApprovalRequest, ApprovalThreshold
from backoffice.selectors import approvals_waiting_for
from backoffice.services.staff_changes import (
    staff_adjust,
    staff_set_card_limits,
    staff_set_overdraft_limit,
    staff_waive_fee,
)
from backoffice.services.thresholds import UNSUMMED, approval_threshold_set
from cards.models import Card
from core.money import money

# --- Four eyes where money moves (docs/back-office.md, "Four eyes") ---------------------------
# Where each kind's target and result live in the admin.
TARGETS = {
    ApprovalRequest.Kind.ADJUSTMENT: ("accounts", "account"),
    ApprovalRequest.Kind.FEE_WAIVER: ("accounts", "fee"),
    ApprovalRequest.Kind.OVERDRAFT_RAISE: ("accounts", "account"),
    ApprovalRequest.Kind.CARD_LIMITS_RAISE: ("cards", "card"),
    ApprovalRequest.Kind.PIN_UNBLOCK: ("cards", "card"),
}
RESULTS = {
    ApprovalRequest.Kind.ADJUSTMENT: ("accounts", "adjustment"),
    ApprovalRequest.Kind.FEE_WAIVER: ("accounts", "fee"),
    ApprovalRequest.Kind.OVERDRAFT_RAISE: ("accounts", "account"),
    ApprovalRequest.Kind.CARD_LIMITS_RAISE: ("cards", "card"),
    ApprovalRequest.Kind.PIN_UNBLOCK: ("cards", "pinunblock"),
}


def _link(kind_urls, approval: ApprovalRequest, object_id: str):
    if not object_id:
        return "—"
    app_label, model_name = kind_urls[approval.kind]
    url = reverse(f"admin:{app_label}_{model_name}_change", args=[object_id])
    return format_html('<a href="{}">{}</a>', url, object_id)


class WaitingFilter(admin.SimpleListFilter):
    """The dashboard's queue: pending requests that someone else asked for (the user may
    decide them)."""

    title = "waiting for"
    parameter_name = "waiting"

    def lookups(self, request, model_admin):
        return [("me", "My decision (pending, asked by someone else)")]

    def queryset(self, request, queryset):
        if self.value() == "me":
            return approvals_waiting_for(request.user, queryset)
        return queryset


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Staff asked for a change of money; another staff user approves it (the change is made
    then, as them) or rejects it, with a reason. Nobody decides their own request (the
    service refuses it, and the database)."""

    list_display = [
        "id",
        "kind",
        "target_link",
        "amount_display",
        "requested_by",
        "status",
        "decided_by",
        "created_at",
    ]
    list_filter = [WaitingFilter, "status", "kind", "institution"]
    list_select_related = ["requested_by", "decided_by"]
    search_fields = ["id", "target_id"]
    search_help_text = "An exact request id, or the account, fee or card id it is about."
    actions = [approve_requests, reject_requests]
    fields = [
        "id",
        "institution",
        "kind",
        "target_link",
        "amount_display",
        "details",
        "status",
        "requested_by",
        "request_reason",
        "created_at",
        "decided_by",
        "decision_reason",
        "decided_at",
        "result_link",
    ]
    readonly_fields = fields

    amount_display = money_column("amount", description="amount", ordering="amount")

    @admin.display(description="about", ordering="target_id")
    def target_link(self, obj):
        return _link(TARGETS, obj, obj.target_id)

    @admin.display(description="made (once approved)")
    def result_link(self, obj):
        return _link(RESULTS, obj, obj.result_id)

    @admin.display(description="asked for")
    def details(self, obj):
        return asked_for(obj)


def apply_staff_changes(
    model_admin,
    request,
    objects,
    service,
    *,
    arguments,
    made: str,
    action: str,
    reason: str,
    already: str,
):
    """`apply_each` of a staff change of money (`backoffice.services.staff_changes`): each made
    at once or asked for, the history and the message saying which."""
    return apply_each(
        model_admin,
        request,
        objects,
        service,
        arguments=arguments,
        describe=lambda outcome: staff_change_described(outcome.value, made, action, reason),
        done=staff_changes_done,
        already=already,
    )


def _one(model_admin, request, queryset, what: str):
    """The one selected row of an action that works on one (None and a warning otherwise)."""
    rows = list(queryset.order_by("pk")[:2])
    if len(rows) != 1:
        model_admin.message_user(request, f"Select one {what}.", messages.WARNING)
        return None
    return rows[0]


class AccountRequestAdmin(AccountAdmin):
    """The accounts' admin, with "Adjust" and "Change the overdraft limit": made at once
    within the institution's threshold, else asked for (another staff user approves)."""

    actions = [*AccountAdmin.actions, "request_adjustment", "change_overdraft_limit"]

    @admin.action(
        description="Adjust (load or unload; above the threshold another staff user approves)",
        permissions=["change"],
    )
    def request_adjustment(self, request, queryset):
        """On one account: the form (direction, amount in its currency, description, reason);
        its submission adjusts or asks (`staff_adjust`)."""
        account = _one(self, request, queryset, "account to adjust")
        if account is None:
            return None
        form = AdjustmentRequestForm(
            request.POST if CONFIRM in request.POST else None, currency=account.currency
        )
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            verb = "Load (credit)" if data["direction"] == "credit" else "Unload (debit)"
            apply_staff_changes(
                self,
                request,
                [account],
                staff_adjust,
                arguments=lambda account: {
                    "account": account,
                    "direction": data["direction"],
                    "amount": data["amount"],
                    "description": data["description"],
                    "reason": data["reason"],
                },
                made=f"{verb} of {money(data['amount'], account.currency)}",
                action="Adjust",
                reason=data["reason"],
                already="Nothing asked: {ids}.",
            )
            return None
        return confirmation_page(
            self,
            request,
            template="admin/accounts/account/adjustment_request.html",
            title="Adjust the balance",
            form=form,
            action_name="request_adjustment",
            confirm_name=CONFIRM,
            objects=[account],
            submit_label="Adjust, or ask for approval",
            rows=[_account_row(account)],
        )

    @admin.action(
        description="Change the overdraft limit (a raise above the threshold: another staff "
        "user approves)",
        permissions=["change"],
    )
    def change_overdraft_limit(self, request, queryset):
        """On one account: the new limit in its currency and a reason; its submission sets it
        or asks (`staff_set_overdraft_limit`)."""
        account = _one(self, request, queryset, "account to change the overdraft limit of")
        if account is None:
            return None
        form = OverdraftLimitForm(
            request.POST if CONFIRM in request.POST else None, currency=account.currency
        )
        if form.is_bound and form.is_valid():
            limit, reason = form.cleaned_data["limit"], form.cleaned_data["reason"]
            before = money(account.overdraft_limit, account.currency)
            apply_staff_changes(
                self,
                request,
                [account],
                staff_set_overdraft_limit,
                arguments=lambda account: {"account": account, "limit": limit, "reason": reason},
                made=f"Overdraft limit {before} → {money(limit, account.currency)}",
                action="Change the overdraft limit",
                reason=reason,
                already="The overdraft limit is that already: {ids}.",
            )
            return None
        return confirmation_page(
            self,
            request,
            template="admin/accounts/account/overdraft_limit.html",
            title="Change the overdraft limit",
            form=form,
            action_name="change_overdraft_limit",
            confirm_name=CONFIRM,
            objects=[account],
            submit_label="Set the limit, or ask for approval",
            rows=[_account_row(account)],
        )


def _account_row(account: Account) -> dict:
    return {
        "account": account,
        "posted": money(account.posted, account.currency),
        "available": money(account.available, account.currency),
        "overdraft_limit": money(account.overdraft_limit, account.currency),
    }


class FeeWaiverRequestAdmin(FeeAdmin):
    """The fees' admin, whose "Waive" waives each fee within the institution's threshold and
    asks for the others: another staff user approves (the fee is waived then, as them, with
    this reason)."""

    actions = ["waive_fees"]

    @admin.action(
        description="Waive selected fees (asks for a reason; above the threshold another staff "
        "user approves)",
        permissions=["change"],
    )
    def waive_fees(self, request, queryset):
        form = ReasonForm(
            request.POST if CONFIRM in request.POST else None, help_text=APPROVAL_REASON_HELP
        )
        if form.is_bound and form.is_valid():
            reason = form.cleaned_data["reason"]
            # A fee not charged, or one already waiting, is refused by the service.
            apply_staff_changes(
                self,
                request,
                queryset.order_by("pk"),
                staff_waive_fee,
                arguments=lambda fee: {"fee": fee, "reason": reason},
                made="Waived",
                action="Waive",
                reason=reason,
                already="Nothing asked: {ids}.",
            )
            return None
        fees = list(queryset.order_by("pk"))
        return confirmation_page(
            self,
            request,
            template="admin/accounts/fee/waive_confirmation.html",
            title="Waive fees",
            form=form,
            action_name="waive_fees",
            confirm_name=CONFIRM,
            objects=fees,
            submit_label=f"Waive {len(fees)} fee(s), or ask for approval",
            rows=[{"fee": fee, "amount": money(fee.amount, fee.currency)} for fee in fees],
        )


class CardRequestAdmin(CardAdmin):
    """The cards' admin, with "Change the limits" (a raise above the threshold: another staff
    user approves)."""

    actions = [*CardAdmin.actions, "change_limits"]

    @admin.action(
        description="Change the limits (a raise above the threshold: another staff user approves)",
        permissions=["change"],
    )
    def change_limits(self, request, queryset):
        """On one card: its four limits in its account's currency and a reason; its
        submission sets them or asks (`staff_set_card_limits`)."""
        card = _one(self, request, queryset, "card to change the limits of")
        if card is None:
            return None
        currency = card.account.currency
        form = CardLimitsForm(
            request.POST if CONFIRM in request.POST else None, card=card, currency=currency
        )
        if form.is_bound and form.is_valid():
            limits, reason = form.limits(), form.cleaned_data["reason"]
            words = ", ".join(
                f"{CARD_LIMIT_LABELS[field].lower()} {money(value, currency)}"
                for field, value in limits.items()
                if value != getattr(card, field)
            )
            apply_staff_changes(
                self,
                request,
                [card],
                staff_set_card_limits,
                arguments=lambda card: {"card": card, "changes": limits, "reason": reason},
                made=f"Limits set: {words}",
                action="Change the limits",
                reason=reason,
                already="The limits are those already: {ids}.",
            )
            return None
        return confirmation_page(
            self,
            request,
            template="admin/cards/card/limits_change.html",
            title="Change the card's limits",
            form=form,
            action_name="change_limits",
            confirm_name=CONFIRM,
            objects=[card],
            submit_label="Set the limits, or ask for approval",
        )


@admin.register(ApprovalThreshold)
class ApprovalThresholdAdmin(ModelAdmin):
    """Up to where one staff user of an institution acts alone (docs/back-office.md, "Four
    eyes"). Staff see them; the bank's administrators (superusers) set them."""

    form = ApprovalThresholdForm
    list_display = ["institution", "kind", "up_to_display", "daily_up_to_display", "updated_at"]
    list_filter = ["kind", "institution"]
    fields = ["institution", "kind", "currency", "up_to_text", "daily_up_to_text"]

    @admin.display(description="one staff user alone up to", ordering="up_to")
    def up_to_display(self, obj):
        if obj.kind == ApprovalRequest.Kind.PIN_UNBLOCK:
            return f"{obj.up_to} unblock(s) of a card in 30 days"
        return money(obj.up_to, obj.currency)

    @admin.display(description="one staff user in 24 hours up to")
    def daily_up_to_display(self, obj):
        if obj.kind == ApprovalRequest.Kind.PIN_UNBLOCK:
            return "—" if obj.daily_up_to is None else f"{obj.daily_up_to} unblock(s)"
        if obj.kind in UNSUMMED:
            return "—"
        return money(obj.up_to if obj.daily_up_to is None else obj.daily_up_to, obj.currency)

    def get_actions(self, request):
        # A threshold is removed from its own page, one at a time.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_readonly_fields(self, request, obj=None):
        # What a threshold is about stays; its amount changes.
        return ["institution", "kind", "currency"] if obj is not None else []

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        threshold = approval_threshold_set(
            institution=obj.institution,
            kind=obj.kind,
            currency=obj.currency,
            up_to=data["up_to"],
            daily_up_to=data["daily_up_to"],
        )
        adopt(obj, threshold)


admin.site.unregister(Account)
admin.site.register(Account, AccountRequestAdmin)
admin.site.unregister(Fee)
admin.site.register(Fee, FeeWaiverRequestAdmin)
admin.site.unregister(Card)
admin.site.register(Card, CardRequestAdmin)
