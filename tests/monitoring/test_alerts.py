"""Alerts: `alerts_raise` writes one alert and one event per hit (alert and decline rules
alike), `alert_resolve` records who, when and why, once; the database keeps a resolution
consistent."""

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from api.names import api_data
from core.exceptions import InvalidStateTransition, ValidationFailed
from monitoring.models import MonitoringAlert
from monitoring.services import Screening, alert_resolve, alerts_raise, monitoring_rule_update
from tests.monitoring.helpers import (
    MERCHANT,
    MERCHANT_SNAPSHOT,
    active_card,
    alert_events,
    make_rule,
    raise_alerts,
    threshold,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def card():
    return active_card()


@pytest.fixture
def staff():
    return User.objects.create_user("reviewer", password="x", is_staff=True)


def test_one_alert_and_one_event_per_hit(card):
    fi = card.institution
    alert_rule = threshold(fi, amount=100, action="alert")
    decline_rule = make_rule(fi, "blocked_mcc", action="decline", mccs=["5411"])
    make_rule(fi, "blocked_country", countries=["408"])  # does not hit
    merchant = {**MERCHANT, "terminalId": "T-1"}  # extra keys are not kept
    alerts = raise_alerts(card, 250, merchant=merchant, subject_id="auth_1")
    assert len(alerts) == 2
    stored = list(MonitoringAlert.objects.order_by("created_at", "id"))
    assert {alert.pk for alert in stored} == {alert.pk for alert in alerts}
    by_rule = {alert.rule_id: alert for alert in stored}
    for rule, details in [
        (
            alert_rule,
            {"amount": 250, "thresholdAmount": 100, "currency": "EUR", "riskLevel": "low"},
        ),
        (decline_rule, {"mcc": "5411"}),
    ]:
        alert = by_rule[rule.pk]
        assert alert.pk.startswith("alr_")
        assert (
            alert.institution_id,
            alert.card_id,
            alert.subject_type,
            alert.subject_id,
            alert.amount,
            alert.currency,
            api_data(alert.merchant),
            alert.action,
            api_data(alert.details),
            alert.status,
            alert.resolved_by,
            alert.resolved_at,
            alert.resolution_note,
        ) == (
            fi.pk,
            card.pk,
            "authorization",
            "auth_1",
            250,
            "EUR",
            MERCHANT_SNAPSHOT,
            rule.action,
            details,
            "open",
            None,
            None,
            "",
        )
    events = sorted(alert_events(), key=lambda data: data["ruleId"])
    assert events == sorted(
        [
            {
                "alertId": by_rule[rule.pk].pk,
                "ruleId": rule.pk,
                "kind": rule.kind,
                "action": rule.action,
                "cardId": card.pk,
                "subjectType": "authorization",
                "subjectId": "auth_1",
            }
            for rule in (alert_rule, decline_rule)
        ],
        key=lambda data: data["ruleId"],
    )


def test_a_refused_transfer_has_no_subject_id_and_no_merchant(card):
    rule = threshold(card.institution, amount=100, action="decline")
    [alert] = raise_alerts(card, 101, merchant=None, subject_type="transfer", subject_id=None)
    alert = MonitoringAlert.objects.get(pk=alert.pk)
    assert (alert.subject_type, alert.subject_id, alert.merchant, alert.action) == (
        "transfer",
        None,
        None,
        "decline",
    )
    assert alert_events() == [
        {
            "alertId": alert.pk,
            "ruleId": rule.pk,
            "kind": "amount_threshold",
            "action": "decline",
            "cardId": card.pk,
            "subjectType": "transfer",
            "subjectId": None,
        }
    ]


def test_no_hit_raises_nothing(card):
    threshold(card.institution, amount=10_000)
    assert raise_alerts(card, 100) == []
    assert (
        alerts_raise(
            screening=Screening(),
            card=card,
            amount=1,
            currency="EUR",
            merchant=None,
            subject_type="transfer",
        )
        == []
    )
    assert not MonitoringAlert.objects.exists() and alert_events() == []


def test_the_alert_keeps_the_action_the_rule_had_when_it_hit(card):
    rule = threshold(card.institution, amount=1, action="alert")
    [first] = raise_alerts(card, 2)
    monitoring_rule_update(rule=rule, changes={"action": "decline"})
    [second] = raise_alerts(card, 2)
    assert MonitoringAlert.objects.get(pk=first.pk).action == "alert"
    assert MonitoringAlert.objects.get(pk=second.pk).action == "decline"


def test_unknown_subject_type_is_a_bug(card):
    threshold(card.institution, amount=1)
    with pytest.raises(ValueError, match="subject type"):
        raise_alerts(card, 2, subject_type="payout")


# --- resolve
def test_resolve_records_who_when_and_the_note(card, staff):
    threshold(card.institution, amount=1)
    [alert] = raise_alerts(card, 2)
    resolved = alert_resolve(alert=alert, user=staff, note="  Customer confirmed the purchase. ")
    stored = MonitoringAlert.objects.get(pk=alert.pk)
    assert (stored.status, stored.resolved_by, stored.resolution_note) == (
        "resolved",
        staff,
        "Customer confirmed the purchase.",
    )
    assert stored.resolved_at is not None and stored.resolved_at >= stored.created_at
    assert resolved.resolved_at == stored.resolved_at
    assert alert_events("monitoring.alert_resolved") == [
        {"alertId": alert.pk, "ruleId": alert.rule_id, "cardId": card.pk}
    ]


def test_only_open_alerts_can_be_resolved(card, staff):
    threshold(card.institution, amount=1)
    [alert] = raise_alerts(card, 2)
    alert_resolve(alert=alert, user=staff, note="Checked.")
    other = User.objects.create_user("second", is_staff=True)
    with pytest.raises(InvalidStateTransition) as excinfo, transaction.atomic():
        alert_resolve(alert=alert, user=other, note="Again.")
    assert excinfo.value.details == {"from": "resolved", "to": "resolved"}
    assert excinfo.value.status == 409
    stored = MonitoringAlert.objects.get(pk=alert.pk)
    assert (stored.resolved_by, stored.resolution_note) == (staff, "Checked.")
    assert len(alert_events("monitoring.alert_resolved")) == 1


@pytest.mark.parametrize("note", ["", "   ", None, "x" * 2001])
def test_a_note_is_required(card, staff, note):
    threshold(card.institution, amount=1)
    [alert] = raise_alerts(card, 2)
    with pytest.raises(ValidationFailed) as excinfo, transaction.atomic():
        alert_resolve(alert=alert, user=staff, note=note)
    assert list(excinfo.value.details) == ["note"]
    assert MonitoringAlert.objects.get(pk=alert.pk).status == "open"


@pytest.mark.parametrize(
    "update",
    [
        {"status": "resolved"},  # without who and when
        {"resolved_at": "2026-01-01T00:00:00Z"},  # open with a resolution time
        {"amount": 0},
    ],
)
def test_the_database_keeps_resolutions_consistent(card, update):
    threshold(card.institution, amount=1)
    [alert] = raise_alerts(card, 2)
    with pytest.raises(IntegrityError), transaction.atomic():
        MonitoringAlert.objects.filter(pk=alert.pk).update(**update)
