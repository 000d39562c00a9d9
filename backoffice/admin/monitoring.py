"""Back office for monitoring: rules and the alerts their hits raised.

Rules are created and tuned through the API; here staff review them and switch them on or off
with the actions "Enable" and "Disable" (`backoffice.actions.monitoring`), which call
`monitoring_rule_update` as the API does (its validation, its lock and the
`monitoring.rule_updated` event hold). Alerts are reviewed
here and resolved with the action "Resolve": a confirmation page asks for a note (required),
then `alert_resolve` records the staff user, the time and the note. Every change leaves one
`LogEntry` per object (who, when, what). Alerts are cases (`backoffice.admin.cases`): notes,
an assignee and the "mine" queue (`?assigned=me`). Nothing is added or deleted here and no
change form ever saves a rule or an alert (both change pages are view-only).

An alert's card is shown by its masked PAN only (first six and last four digits); the card's
secret columns are never loaded (`backoffice.admin.cards.SECRET_FIELDS`).
"""

from django.contrib import admin

from api.names import api_data, api_path
from api.versions import V2
from backoffice.actions.monitoring import (
    assign_alerts,
    disable_rules,
    enable_rules,
    note_alerts,
    resolve_alerts,
    take_alerts,
)
from backoffice.admin.cards import SECRET_FIELDS, masked_pan_link
from backoffice.admin.cases import CaseWork
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    admin_link,
    changelist_link,
    fields_display,
    money_column,
)
from backoffice.names import RULE_KINDS, countries_text, mccs_text, rule_kind, words_filter
from core.money import money
from events.models import Event
from monitoring.models import KIND_PARAMETERS, MonitoringAlert, MonitoringRule

# A rule's parameters that are amounts in minor units of its `currency`.
MONEY_PARAMETERS = frozenset({"amount", "max_amount"})


def parameters_text(rule: MonitoringRule) -> str:
    """`riskLevel=any amount=1,000.00 EUR`, in the API's names, amounts shown with `money`
    (the currency goes with them, not apart), merchant categories and countries by name
    (`backoffice.names`)."""
    parts = []
    for name in KIND_PARAMETERS[rule.kind]:
        value = getattr(rule, name)
        if name == "currency" and rule.currency:
            continue  # shown with the amount
        if name in MONEY_PARAMETERS:
            value = money(value, rule.currency)
        elif name == "mccs":
            value = mccs_text(value)
        elif name == "countries":
            value = countries_text(value)
        elif isinstance(value, list):
            value = ",".join(value)
        elif value is None:
            value = "any"  # only risk_level may be None
        parts.append(f"{api_path(name, V2)}={value}")
    return " ".join(parts)


# --- Rules ----------------------------------------------------------------------------------
@admin.register(MonitoringRule)
class MonitoringRuleAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = [
        "id",
        "name",
        "institution",
        "kind_display",
        "action",
        "enabled",
        "parameters_display",
        "updated_at",
    ]
    list_filter = ["enabled", words_filter("kind", RULE_KINDS, "kind"), "action", "institution"]
    list_select_related = ["institution"]
    search_fields = ["id"]
    search_help_text = "An exact rule id."
    actions = [enable_rules, disable_rules]
    fields = [
        "id",
        "institution",
        "name",
        "kind_display",
        "action",
        "enabled",
        "parameters_display",
        "alerts_link",
        "events_link",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description="kind", ordering="kind")
    def kind_display(self, obj):
        return rule_kind(obj.kind)

    @admin.display(description="parameters")
    def parameters_display(self, obj):
        return parameters_text(obj)

    @admin.display(description="alerts")
    def alerts_link(self, obj):
        count = MonitoringAlert.objects.filter(rule=obj).count()
        return changelist_link(MonitoringAlert, f"{count} alert(s)", rule=obj.pk)

    @admin.display(description="events")
    def events_link(self, obj):
        return changelist_link(Event, "Events of this rule", object_id=obj.pk)


# --- Alerts ---------------------------------------------------------------------------------
class RuleKindFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return list(RULE_KINDS.items())

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(rule__kind=self.value())
        return queryset


@admin.register(MonitoringAlert)
class MonitoringAlertAdmin(CaseWork, ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Raised by card authorizations and card transfers (`alerts_raise`), and by changes of money
    made alone by staff to one account (`alert_raise_staff_changes`); resolved here."""

    list_display = [
        "id",
        "status",
        "kind",
        "rule_link",
        "paid_with",
        "amount_display",
        "subject",
        "created_at",
    ]
    list_filter = ["status", "action", RuleKindFilter, "institution"]
    search_fields = ["id", "card_id", "rule_id", "account_id", "subject_id"]
    search_help_text = "An exact alert, card, rule, account, authorization or transfer id."
    actions = [resolve_alerts, note_alerts, take_alerts, assign_alerts]
    fields = [
        "id",
        "institution",
        "status",
        "case_display",
        "action",
        "kind",
        "rule_link",
        "card_link",
        "account_link",
        "subject",
        "amount_display",
        "merchant_display",
        "details_display",
        "resolved_by",
        "resolved_at",
        "resolution_note",
        "events_link",
        "created_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        # The card's secrets stay in the database: only its masked PAN is shown.
        return (
            super()
            .get_queryset(request)
            .select_related("rule", "card", "account", "resolved_by", "institution")
            .defer(*(f"card__{name}" for name in SECRET_FIELDS))
        )

    @admin.display(description="kind", ordering="rule__kind")
    def kind(self, obj):
        return rule_kind(obj.rule.kind) if obj.rule is not None else obj.get_subject_type_display()

    @admin.display(description="rule", ordering="rule_id")
    def rule_link(self, obj):
        return "—" if obj.rule is None else admin_link(obj.rule, obj.rule.name)

    @admin.display(description="card (masked PAN)", ordering="card_id")
    def card_link(self, obj):
        return "—" if obj.card is None else masked_pan_link(obj.card)

    @admin.display(description="account", ordering="account_id")
    def account_link(self, obj):
        return "—" if obj.account is None else admin_link(obj.account, obj.account_id)

    @admin.display(description="card or account")
    def paid_with(self, obj):
        """The list's one column for what the alert is about: a payment's card (masked PAN),
        or the account staff changed alone (the list fits 1400 px with one, not two)."""
        return self.card_link(obj) if obj.card is not None else self.account_link(obj)

    amount_display = money_column("amount", description="amount", ordering="amount")

    @admin.display(description="payment or change")
    def subject(self, obj):
        if obj.subject_type == MonitoringAlert.SubjectType.STAFF_CHANGES:
            return f"latest change: {obj.subject_id}"
        return f"{obj.subject_type} {obj.subject_id or '(refused, no id)'}"

    @admin.display(description="merchant")
    def merchant_display(self, obj):
        return "—" if obj.merchant is None else fields_display(api_data(obj.merchant))

    @admin.display(description="why it hit")
    def details_display(self, obj):
        # Label and value per field, amounts with `money` (the payment's currency when the
        # details name none): "amount 120.00 EUR", never `"amount": 12000`.
        return fields_display(api_data(obj.details), currency=obj.currency)

    @admin.display(description="events")
    def events_link(self, obj):
        return changelist_link(Event, "Events of this alert", object_id=obj.pk)
