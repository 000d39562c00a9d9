"""Monitoring rules and the alerts their hits raise.

A rule belongs to one institution and is of one `kind`; each kind has its own parameters and no
other (CHECK constraints `monitoring_rule_<kind>_parameters`: a velocity rule never carries an
MCC list, a blocked-MCC rule never a window). The parameters of every kind are columns of one
table rather than a JSON blob, so the database checks them and the screening query reads them
without parsing. `KIND_PARAMETERS` is the one list of which parameter belongs to which kind:
the constraints, the services and the API are built from it.

An alert is one hit of one rule on one payment (a card authorization or a card transfer): a
snapshot of the payment (amount, currency, merchant), the rule's action at the time of the hit,
and `details` saying why it hit. Alerts are raised open and resolved by staff (who, when, note).
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from cards.models import Card
from core.ids import new_id
from core.models import Timestamped
from institutions.models import Institution

MAX_WINDOW_SECONDS = 31 * 24 * 3600


# kind -> its parameters (domain field names), in the order the API and the admin show them.
KIND_PARAMETERS = {
    "amount_threshold": ("risk_level", "amount", "currency"),
    "velocity_count": ("window_seconds", "max_count"),
    "velocity_amount": ("window_seconds", "max_amount", "currency"),
    "blocked_mcc": ("mccs",),
    "blocked_country": ("countries",),
}
# Parameters a rule may leave NULL: an amount threshold without a risk level applies to any card.
OPTIONAL_PARAMETERS = {"risk_level"}
PARAMETERS = (
    "risk_level",
    "amount",
    "currency",
    "window_seconds",
    "max_count",
    "max_amount",
    "mccs",
    "countries",
)


def _kind_constraint(kind: str) -> models.CheckConstraint:
    """A rule of `kind` has its required parameters and no other kind's."""
    own = KIND_PARAMETERS[kind]
    condition = Q()
    for name in PARAMETERS:
        if name not in own:
            condition &= Q(**{f"{name}__isnull": True})
        elif name not in OPTIONAL_PARAMETERS:
            condition &= Q(**{f"{name}__isnull": False})
    return models.CheckConstraint(
        condition=~Q(kind=kind) | condition, name=f"monitoring_rule_{kind}_parameters"
    )


def _rule_id():
    return new_id("mrl")


def _alert_id():
    return new_id("alr")


class MonitoringRule(Timestamped):
    class Kind(models.TextChoices):
        AMOUNT_THRESHOLD = "amount_threshold"
        VELOCITY_COUNT = "velocity_count"
        VELOCITY_AMOUNT = "velocity_amount"
        BLOCKED_MCC = "blocked_mcc"
        BLOCKED_COUNTRY = "blocked_country"

    class Action(models.TextChoices):
        ALERT = "alert"
        DECLINE = "decline"

    id = models.CharField(primary_key=True, max_length=40, default=_rule_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="monitoring_rules"
    )
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=24, choices=Kind.choices)
    action = models.CharField(max_length=16, choices=Action.choices)
    enabled = models.BooleanField(default=True)

    # Parameters; each kind has exactly its own (KIND_PARAMETERS), the others are NULL.
    # amount_threshold: only cards of this risk level (NULL: any card).
    risk_level = models.CharField(
        max_length=8, choices=Card.RiskLevel.choices, null=True, blank=True
    )
    # amount_threshold: a payment above `amount` (minor units of `currency`) hits.
    amount = models.BigIntegerField(null=True, blank=True)
    # amount_threshold, velocity_amount: ISO 4217 alpha-3.
    currency = models.CharField(max_length=3, null=True, blank=True)
    # velocity_*: the payments of the last `window_seconds` are counted.
    window_seconds = models.PositiveIntegerField(null=True, blank=True)
    # velocity_count: more than `max_count` payments in the window hit.
    max_count = models.PositiveIntegerField(null=True, blank=True)
    # velocity_amount: more than `max_amount` (minor units of `currency`) in the window hits.
    max_amount = models.BigIntegerField(null=True, blank=True)
    # blocked_mcc: 4-digit merchant category codes; blocked_country: ISO 3166-1 numeric codes.
    mccs = ArrayField(models.CharField(max_length=4), null=True, blank=True)
    countries = ArrayField(models.CharField(max_length=3), null=True, blank=True)

    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="monitoring_rule_inst_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=list(KIND_PARAMETERS)), name="monitoring_rule_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(action__in=["alert", "decline"]), name="monitoring_rule_action_valid"
            ),
            *(_kind_constraint(kind) for kind in KIND_PARAMETERS),
            models.CheckConstraint(
                condition=Q(amount__gt=0) & Q(max_amount__gt=0) & Q(max_count__gt=0),
                name="monitoring_rule_amounts_positive",
            ),
            models.CheckConstraint(
                condition=Q(window_seconds__gte=1, window_seconds__lte=MAX_WINDOW_SECONDS),
                name="monitoring_rule_window_range",
            ),
            models.CheckConstraint(
                condition=Q(mccs__len__gte=1) & Q(countries__len__gte=1),
                name="monitoring_rule_lists_not_empty",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.kind}, {self.action})"

    @property
    def parameters(self) -> dict:
        """The rule's own parameters (domain names) and their values."""
        return {name: getattr(self, name) for name in KIND_PARAMETERS[self.kind]}


class MonitoringAlert(models.Model):
    """A rule's hit on a card payment (`rule`, `card`, the payment as `subject`), or the
    back office's own watch on staff: several changes of money made alone to one account
    (`account`, `subject_type` staff_changes; no rule, no card; backoffice.services.
    staff_changes); or a reconciliation break open past its business days (`account`: the
    mirrored account, `subject_type` break_ageing, the break as subject; once a break)."""

    class SubjectType(models.TextChoices):
        AUTHORIZATION = "authorization"
        TRANSFER = "transfer"
        STAFF_CHANGES = "staff_changes", "staff changes made alone"
        # A reconciliation break left open too long (docs/reconciliation.md, "Ageing").
        BREAK_AGEING = "break_ageing", "reconciliation break ageing"

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    id = models.CharField(primary_key=True, max_length=40, default=_alert_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="monitoring_alerts"
    )
    # Indexed by monitoring_alert_rule_idx (rule, -id), which its lookups use.
    rule = models.ForeignKey(
        MonitoringRule,
        on_delete=models.PROTECT,
        related_name="alerts",
        db_index=False,
        null=True,
        blank=True,
    )
    card = models.ForeignKey(
        "cards.Card",
        on_delete=models.PROTECT,
        related_name="monitoring_alerts",
        null=True,
        blank=True,
    )
    # A staff_changes alert's account (indexed by monitoring_alert_account_idx, partial).
    account = models.ForeignKey(
        "accounts.Account",
        on_delete=models.PROTECT,
        related_name="monitoring_alerts",
        null=True,
        blank=True,
        db_index=False,
    )
    subject_type = models.CharField(max_length=16, choices=SubjectType.choices)
    # The authorization or transfer; NULL when the payment was refused before it had an id
    # (a refused card transfer: by a decline rule, or for another reason such as the funds).
    subject_id = models.CharField(max_length=40, null=True, blank=True)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    # {"name", "mcc", "countryCode", "channel"} of an authorization; NULL for a transfer.
    merchant = models.JSONField(null=True, blank=True)
    # The rule's action when it hit (a rule's action may change later).
    action = models.CharField(max_length=16, choices=MonitoringRule.Action.choices)
    details = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="monitoring_alert_inst_idx"),
            models.Index(fields=["card", "-id"], name="monitoring_alert_card_idx"),
            # GET /monitoring-alerts?ruleId=, newest first: one rule's alerts among all of them.
            models.Index(fields=["rule", "-id"], name="monitoring_alert_rule_idx"),
            # The back office's queue of open alerts (backoffice.dashboard): the few open ones,
            # counted without reading the resolved history.
            models.Index(
                fields=["institution"],
                condition=Q(status="open"),
                name="monitoring_alert_open_idx",
            ),
            models.Index(
                fields=["account", "-id"],
                condition=Q(account__isnull=False),
                name="monitoring_alert_account_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="monitoring_alert_amount_pos"),
            # A break's ageing alert is raised once (reconciliation.services.ageing).
            models.UniqueConstraint(
                fields=["subject_id"],
                condition=Q(subject_type="break_ageing"),
                name="monitoring_alert_break_once",
            ),
            # A payment's alert has its rule and card; the watch on staff its account only.
            models.CheckConstraint(
                condition=Q(
                    subject_type__in=["authorization", "transfer"],
                    rule__isnull=False,
                    card__isnull=False,
                    account__isnull=True,
                )
                | Q(
                    subject_type__in=["staff_changes", "break_ageing"],
                    rule__isnull=True,
                    card__isnull=True,
                    account__isnull=False,
                    action="alert",
                ),
                name="monitoring_alert_subject",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status="open", resolved_at__isnull=True, resolved_by__isnull=True)
                    | Q(status="resolved", resolved_at__isnull=False, resolved_by__isnull=False)
                ),
                name="monitoring_alert_resolution",
            ),
        ]

    def __str__(self):
        return f"{self.id} ({self.status})"
