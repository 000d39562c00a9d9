"""Four eyes where money moves (docs/back-office.md, "Four eyes"): the approval requests, which
another staff user approves or rejects (`backoffice.actions.approvals`), and the thresholds up to
which one staff user acts alone. What is asked for is declared with its action, its policy a
property of the declaration (`backoffice.actions.four_eyes`)."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import Account, Fee
from backoffice.actions.approvals import (
    approve_requests,
    reject_requests,
    remove_threshold,
    set_threshold,
)
from backoffice.actions.forms import DeclaredForms
from backoffice.actions.four_eyes import asked_for
from backoffice.forms import ApprovalThresholdForm
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ModelAdmin,
    customer_column,
    money_column,
)
from backoffice.models import ApprovalRequest, ApprovalThreshold
from backoffice.selectors import approvals_waiting_for
from backoffice.services.thresholds import UNSUMMED
from cards.models import Card
from core.money import money
from customers.models import Customer

# --- Four eyes where money moves (docs/back-office.md, "Four eyes") ---------------------------
# Where each kind's target and result live in the admin.
TARGETS = {
    ApprovalRequest.Kind.ADJUSTMENT: ("accounts", "account"),
    ApprovalRequest.Kind.FEE_WAIVER: ("accounts", "fee"),
    ApprovalRequest.Kind.OVERDRAFT_RAISE: ("accounts", "account"),
    ApprovalRequest.Kind.CARD_LIMITS_RAISE: ("cards", "card"),
    ApprovalRequest.Kind.PIN_UNBLOCK: ("cards", "card"),
    ApprovalRequest.Kind.INBOUND_APPLY: ("payments", "inboundentry"),
    ApprovalRequest.Kind.INBOUND_RETURN: ("payments", "inboundentry"),
    ApprovalRequest.Kind.BREAK_CREDIT: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_FEE: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_FORCE_POST: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_PLACE: ("reconciliation", "reconciliationbreak"),
}
RESULTS = {
    ApprovalRequest.Kind.ADJUSTMENT: ("accounts", "adjustment"),
    ApprovalRequest.Kind.FEE_WAIVER: ("accounts", "fee"),
    ApprovalRequest.Kind.OVERDRAFT_RAISE: ("accounts", "account"),
    ApprovalRequest.Kind.CARD_LIMITS_RAISE: ("cards", "card"),
    ApprovalRequest.Kind.PIN_UNBLOCK: ("cards", "pinunblock"),
    ApprovalRequest.Kind.INBOUND_APPLY: ("payments", "inboundentry"),
    ApprovalRequest.Kind.INBOUND_RETURN: ("payments", "inboundentry"),
    ApprovalRequest.Kind.BREAK_CREDIT: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_FEE: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_FORCE_POST: ("reconciliation", "reconciliationbreak"),
    ApprovalRequest.Kind.BREAK_PLACE: ("reconciliation", "reconciliationbreak"),
}


def _with_customers(approvals) -> None:
    """Sets `_customer` on each request: the customer whose account, fee or card it is about
    (their secret columns left in the database)."""
    approvals = list(approvals)
    targets = {approval.target_id for approval in approvals if approval.target_id}
    owners = dict(Account.objects.filter(pk__in=targets).values_list("pk", "customer_id"))
    owners |= dict(Card.objects.filter(pk__in=targets).values_list("pk", "customer_id"))
    owners |= dict(Fee.objects.filter(pk__in=targets).values_list("pk", "account__customer_id"))
    customers = Customer.objects.defer("national_id_encrypted").in_bulk(
        {owner for owner in owners.values() if owner}
    )
    for approval in approvals:
        approval._customer = customers.get(owners.get(approval.target_id))


_customer_column = customer_column("_customer", description="for")


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

    # What is asked (how much in its words), for whom, about which account or card, by whom.
    list_display = [
        "id",
        "details",
        "for_whom",
        "target_link",
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
        "for_whom",
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

    @admin.display(description="for")
    def for_whom(self, obj):
        if not hasattr(obj, "_customer"):
            _with_customers([obj])
        return _customer_column(self, obj)

    def get_changelist_instance(self, request):
        # The customers of the page's requests, in four queries for the page, not per row.
        changelist = super().get_changelist_instance(request)
        _with_customers(changelist.result_list)
        return changelist


@admin.register(ApprovalThreshold)
class ApprovalThresholdAdmin(DeclaredForms, ModelAdmin):
    """Up to where one staff user of an institution acts alone (docs/back-office.md, "Four
    eyes"). Staff see them; the bank's administrators (superusers) set them."""

    form = ApprovalThresholdForm
    add_write = set_threshold
    change_write = set_threshold
    delete_write = remove_threshold
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
