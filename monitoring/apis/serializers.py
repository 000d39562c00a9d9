"""Request and response bodies of the monitoring endpoints: the same in both versions.

The serializers check formats (types, codes, ranges); which parameters a rule of a kind takes
is the services' rule (`monitoring.services.rules`), so the API and the admin answer alike.
"""

from rest_framework import serializers

from api.serializers import (
    AmountField,
    CountryNumericField,
    CurrencyField,
    Serializer,
    StoredDataField,
    StoredDataSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)
from cards.apis.serializers import MccField
from cards.models import Card

from ..models import MAX_WINDOW_SECONDS, MonitoringAlert, MonitoringRule
from ..services.rules import MAX_COUNT, MAX_COUNTRIES, MAX_MCCS, MAX_NAME_LENGTH


# --- input
class MonitoringRuleParameters(StrictSerializer):
    """The parameters of every kind; a rule takes only its own kind's (400 otherwise)."""

    riskLevel = serializers.ChoiceField(  # noqa: N815
        source="risk_level",
        choices=Card.RiskLevel.choices,
        required=False,
        allow_null=True,
        help_text="amount_threshold only: only cards of this risk level (null or absent: any).",
    )
    amount = AmountField(
        required=False,
        help_text="amount_threshold: a payment above this amount (minor units) hits.",
    )
    currency = CurrencyField(
        required=False,
        help_text="amount_threshold and velocity_amount: only payments in this currency count.",
    )
    windowSeconds = WholeNumberField(  # noqa: N815
        source="window_seconds",
        required=False,
        min_value=1,
        max_value=MAX_WINDOW_SECONDS,
        help_text="velocity_count and velocity_amount: the window, 1 second to 31 days.",
    )
    maxCount = WholeNumberField(  # noqa: N815
        source="max_count",
        required=False,
        min_value=1,
        max_value=MAX_COUNT,
        help_text="velocity_count: more payments than this in the window hit.",
    )
    maxAmount = AmountField(  # noqa: N815
        source="max_amount",
        required=False,
        help_text="velocity_amount: more than this sum (minor units) in the window hits.",
    )
    mccs = serializers.ListField(
        child=MccField(),
        required=False,
        min_length=1,
        max_length=MAX_MCCS,
        help_text="blocked_mcc: merchant category codes (4 digits).",
    )
    countries = serializers.ListField(
        child=CountryNumericField(),
        required=False,
        min_length=1,
        max_length=MAX_COUNTRIES,
        help_text="blocked_country: merchant countries, ISO 3166-1 numeric.",
    )


class MonitoringRuleCreate(MonitoringRuleParameters):
    """A new rule: `name`, `kind`, `action`, optional `enabled`, and the parameters of its kind
    only (any other parameter is 400 naming it; a missing required one is 400)."""

    name = StrictCharField(max_length=MAX_NAME_LENGTH)
    kind = serializers.ChoiceField(choices=MonitoringRule.Kind.choices)
    action = serializers.ChoiceField(
        choices=MonitoringRule.Action.choices,
        help_text="alert: the payment goes on, an alert is raised; decline: the payment is "
        "refused (422 declined_by_monitoring) and an alert is raised.",
    )
    enabled = StrictBooleanField(required=False, help_text="Default true.")


class MonitoringRuleUpdate(MonitoringRuleParameters):
    """What changes: `name`, `action`, `enabled`, the parameters of the rule's kind."""

    name = StrictCharField(max_length=MAX_NAME_LENGTH, required=False)
    kind = serializers.ChoiceField(
        choices=MonitoringRule.Kind.choices,
        required=False,
        help_text="Only the rule's own kind: a rule never changes kind.",
    )
    action = serializers.ChoiceField(choices=MonitoringRule.Action.choices, required=False)
    enabled = StrictBooleanField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


class MonitoringAlertQuery(Serializer):
    status = serializers.ChoiceField(choices=MonitoringAlert.Status.choices, required=False)
    cardId = StrictCharField(required=False, max_length=40)  # noqa: N815
    ruleId = StrictCharField(required=False, max_length=40)  # noqa: N815


# --- output
class MonitoringRuleOut(Serializer):
    ruleId = serializers.CharField(source="id")  # noqa: N815
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=MonitoringRule.Kind.choices)
    action = serializers.ChoiceField(choices=MonitoringRule.Action.choices)
    enabled = serializers.BooleanField()
    riskLevel = serializers.ChoiceField(  # noqa: N815
        source="risk_level", choices=Card.RiskLevel.choices, allow_null=True
    )
    amount = serializers.IntegerField(allow_null=True)
    currency = serializers.CharField(allow_null=True)
    windowSeconds = serializers.IntegerField(source="window_seconds", allow_null=True)  # noqa: N815
    maxCount = serializers.IntegerField(source="max_count", allow_null=True)  # noqa: N815
    maxAmount = serializers.IntegerField(source="max_amount", allow_null=True)  # noqa: N815
    mccs = serializers.ListField(child=serializers.CharField(), allow_null=True)
    countries = serializers.ListField(child=serializers.CharField(), allow_null=True)
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class MonitoringAlertMerchant(StoredDataSerializer):
    name = serializers.CharField(allow_null=True)
    mcc = serializers.CharField(allow_null=True)
    countryCode = serializers.CharField(allow_null=True)  # noqa: N815
    channel = serializers.CharField(allow_null=True)


class MonitoringAlertOut(Serializer):
    alertId = serializers.CharField(source="id")  # noqa: N815
    ruleId = serializers.CharField(  # noqa: N815
        source="rule_id",
        allow_null=True,
        help_text="The rule that hit; null for `subjectType: staff_changes` (the back office's "
        "own watch on changes made alone by staff).",
    )
    kind = serializers.ChoiceField(
        source="rule.kind",
        choices=MonitoringRule.Kind.choices,
        allow_null=True,
        help_text="The rule's kind; null without a rule.",
    )
    action = serializers.ChoiceField(
        choices=MonitoringRule.Action.choices, help_text="The rule's action when it hit."
    )
    status = serializers.ChoiceField(choices=MonitoringAlert.Status.choices)
    cardId = serializers.CharField(  # noqa: N815
        source="card_id", allow_null=True, help_text="The card paid with; null for staff_changes."
    )
    accountId = serializers.CharField(  # noqa: N815
        source="account_id",
        allow_null=True,
        help_text="staff_changes only: the account changed several times by staff alone.",
    )
    subjectType = serializers.ChoiceField(  # noqa: N815
        source="subject_type", choices=MonitoringAlert.SubjectType.values
    )
    subjectId = serializers.CharField(  # noqa: N815
        source="subject_id",
        allow_null=True,
        help_text="The authorization or transfer; null for a refused transfer (it has no id). "
        "staff_changes: what the latest change made (an adjustment, a waived fee, the account).",
    )
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    merchant = MonitoringAlertMerchant(allow_null=True, help_text="Authorizations only.")
    details = StoredDataField(
        help_text='Why the rule hit, e.g. {"count": 4, "maxCount": 3, "windowSeconds": 3600}.'
    )
    resolvedAt = TimestampField(source="resolved_at", allow_null=True)  # noqa: N815
    resolutionNote = serializers.CharField(  # noqa: N815
        source="resolution_note", help_text="Written by the reviewer; empty while open."
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815
