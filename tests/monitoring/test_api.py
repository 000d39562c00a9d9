"""`/monitoring-rules` and `/monitoring-alerts` over HTTP, in both versions: the same resources,
each version's envelope and creation status, validation errors naming the field, filters,
pagination, and another institution's objects answering 404."""

import pytest
from django.contrib.auth.models import User

from cards.models import Card
from monitoring.models import MonitoringRule
from monitoring.services import alert_resolve
from tests.accounts.api.helpers import (
    TIMESTAMP,
    assert_error,
    assert_validation_error,
    created,
    listed,
    prefixed_id,
    resource,
    unknown_id,
)
from tests.monitoring.helpers import (
    MERCHANT_SNAPSHOT,
    active_card,
    make_rule,
    raise_alerts,
    threshold,
)

pytestmark = pytest.mark.django_db

NULLS = {
    "riskLevel": None,
    "amount": None,
    "currency": None,
    "windowSeconds": None,
    "maxCount": None,
    "maxAmount": None,
    "mccs": None,
    "countries": None,
}
BODIES = {
    "amount_threshold": {"amount": 100_000, "currency": "EUR", "riskLevel": "high"},
    "velocity_count": {"windowSeconds": 3600, "maxCount": 3},
    "velocity_amount": {"windowSeconds": 86_400, "maxAmount": 500_000, "currency": "EUR"},
    "blocked_mcc": {"mccs": ["7995", "5993"]},
    "blocked_country": {"countries": ["408"]},
}


def create_rule(api, kind="velocity_count", **fields):
    body = {"name": f"{kind} rule", "kind": kind, "action": "alert", **BODIES[kind], **fields}
    return api.post("/monitoring-rules", body)


def rule_body(rule: MonitoringRule) -> dict:
    """What GET answers for `rule` (v2 without meta)."""
    return {
        "ruleId": rule.pk,
        "name": rule.name,
        "kind": rule.kind,
        "action": rule.action,
        "enabled": rule.enabled,
        "riskLevel": rule.risk_level,
        "amount": rule.amount,
        "currency": rule.currency,
        "windowSeconds": rule.window_seconds,
        "maxCount": rule.max_count,
        "maxAmount": rule.max_amount,
        "mccs": rule.mccs,
        "countries": rule.countries,
        "createdAt": rule.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "updatedAt": rule.updated_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }


# --- rules: create
@pytest.mark.parametrize("kind", list(BODIES))
def test_create_a_rule_of_each_kind(api, institution, kind):
    body = created(create_rule(api, kind, action="decline"), api.version)
    rule = MonitoringRule.objects.get(pk=body["ruleId"])
    assert rule.institution_id == institution.pk
    assert prefixed_id("mrl").match(body["ruleId"])
    assert TIMESTAMP.match(body["createdAt"]) and TIMESTAMP.match(body["updatedAt"])
    expected = {**NULLS, **BODIES[kind]}
    if expected["mccs"]:
        expected["mccs"] = sorted(expected["mccs"])
    assert body == {
        "ruleId": rule.pk,
        "name": f"{kind} rule",
        "kind": kind,
        "action": "decline",
        "enabled": True,
        **expected,
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
    }
    assert body == rule_body(rule)


def test_create_disabled_and_without_risk_level(api):
    body = created(create_rule(api, "amount_threshold", enabled=False, riskLevel=None), api.version)
    assert (body["enabled"], body["riskLevel"]) == (False, None)
    body = created(
        api.post(
            "/monitoring-rules",
            {
                "name": "Any card",
                "kind": "amount_threshold",
                "action": "alert",
                "amount": 5,
                "currency": "JPY",
            },
        ),
        api.version,
    )
    assert (body["riskLevel"], body["amount"], body["currency"]) == (None, 5, "JPY")


@pytest.mark.parametrize(
    ("kind", "extra", "details"),
    [
        (
            "velocity_count",
            {"mccs": ["7995"]},
            {"mccs": "Not a parameter of velocity_count rules."},
        ),
        (
            "velocity_count",
            {"riskLevel": None},
            {"riskLevel": "Not a parameter of velocity_count rules."},
        ),
        (
            "blocked_mcc",
            {"amount": 1, "currency": "EUR"},
            {
                "amount": "Not a parameter of blocked_mcc rules.",
                "currency": "Not a parameter of blocked_mcc rules.",
            },
        ),
        (
            "amount_threshold",
            {"windowSeconds": 60},
            {"windowSeconds": "Not a parameter of amount_threshold rules."},
        ),
    ],
)
def test_a_field_of_another_kind_is_a_validation_error(api, kind, extra, details):
    assert_validation_error(create_rule(api, kind, **extra), api.version, details)
    assert not MonitoringRule.objects.exists()


def test_missing_parameters_are_validation_errors(api):
    response = api.post(
        "/monitoring-rules", {"name": "v", "kind": "velocity_amount", "action": "decline"}
    )
    assert_validation_error(
        response,
        api.version,
        {
            "windowSeconds": "Required for velocity_amount rules.",
            "maxAmount": "Required for velocity_amount rules.",
            "currency": "Required for velocity_amount rules.",
        },
    )
    response = api.post(
        "/monitoring-rules", {"name": "t", "kind": "amount_threshold", "action": "alert"}
    )
    assert_validation_error(
        response,
        api.version,
        {
            "amount": "Required for amount_threshold rules.",
            "currency": "Required for amount_threshold rules.",
        },
    )
    response = api.post("/monitoring-rules", {"kind": "blocked_mcc", "mccs": ["7995"]})
    assert_validation_error(
        response,
        api.version,
        {"name": "This field is required.", "action": "This field is required."},
    )


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        (
            {"windowSeconds": 0},
            {"windowSeconds": "Ensure this value is greater than or equal to 1."},
        ),
        (
            {"windowSeconds": 31 * 86_400 + 1},
            {"windowSeconds": "Ensure this value is less than or equal to 2678400."},
        ),
        ({"windowSeconds": "3600"}, {"windowSeconds": "Must be an integer."}),
        ({"maxCount": 1.5}, {"maxCount": "Must be an integer."}),
        ({"maxCount": True}, {"maxCount": "Must be an integer."}),
        ({"kind": "velocity"}, {"kind": '"velocity" is not a valid choice.'}),
        ({"action": "block"}, {"action": '"block" is not a valid choice.'}),
        ({"enabled": "yes"}, {"enabled": "Must be true or false."}),
        ({"name": ""}, {"name": "This field may not be blank."}),
        ({"colour": "red"}, {"colour": "Unknown field."}),
    ],
)
def test_formats_are_validated(api, fields, details):
    body = {"name": "v", "kind": "velocity_count", "action": "alert", "windowSeconds": 60}
    body |= {"maxCount": 3, **fields}
    assert_validation_error(api.post("/monitoring-rules", body), api.version, details)


def test_list_formats_are_validated(api):
    cases = [
        ("blocked_mcc", {"mccs": []}, {"mccs": "Ensure this field has at least 1 elements."}),
        ("blocked_mcc", {"mccs": "7995"}, {"mccs": 'Expected a list of items but got type "str".'}),
        (
            "blocked_mcc",
            {"mccs": ["7995", "79951"]},
            {"mccs.1": "A merchant category code: 4 digits."},
        ),
        (
            "blocked_country",
            {"countries": ["999"]},
            {"countries.0": "999 is not an ISO 3166-1 numeric country code."},
        ),
    ]
    for kind, fields, details in cases:
        assert_validation_error(create_rule(api, kind, **fields), api.version, details)


# --- rules: read
def test_get_list_and_paginate_rules(api, institution, other_institution):
    rules = [make_rule(institution, "blocked_mcc", mccs=[f"{5000 + n}"]) for n in range(3)]
    make_rule(other_institution, "blocked_mcc", mccs=["7995"])
    items, cursor = listed(api.get("/monitoring-rules", {"limit": 2}))
    assert [item["ruleId"] for item in items] == [rules[2].pk, rules[1].pk]
    assert items[0] == rule_body(rules[2])
    items, cursor = listed(api.get("/monitoring-rules", {"limit": 2, "cursor": cursor}))
    assert [item["ruleId"] for item in items] == [rules[0].pk] and cursor is None
    assert resource(api.get(f"/monitoring-rules/{rules[1].pk}"), api.version) == rule_body(rules[1])


def test_another_institutions_rule_is_not_found(api, other_api, institution):
    rule = threshold(institution)
    for response in [
        other_api.get(f"/monitoring-rules/{rule.pk}"),
        other_api.patch(f"/monitoring-rules/{rule.pk}", {"enabled": False}),
        api.get(f"/monitoring-rules/{unknown_id('mrl')}"),
    ]:
        assert_error(
            response, api.version, 404, "not_found", message="No monitoring rule with this id."
        )
    assert listed(other_api.get("/monitoring-rules"))[0] == []
    assert MonitoringRule.objects.get(pk=rule.pk).enabled is True


# --- rules: change
def test_patch_a_rule(api, institution):
    rule = threshold(institution, amount=10_000, risk_level="high")
    body = resource(
        api.patch(
            f"/monitoring-rules/{rule.pk}",
            {"name": "Renamed", "action": "decline", "amount": 20_000, "riskLevel": None},
        ),
        api.version,
    )
    rule.refresh_from_db()
    assert (body["name"], body["action"], body["amount"], body["riskLevel"]) == (
        "Renamed",
        "decline",
        20_000,
        None,
    )
    assert body == rule_body(rule)
    body = resource(
        api.patch(f"/monitoring-rules/{rule.pk}", {"enabled": False, "kind": "amount_threshold"}),
        api.version,
    )
    assert body["enabled"] is False


def test_v1_also_changes_a_rule_with_post(api_v1, institution):
    rule = make_rule(institution, "velocity_count", window_seconds=60, max_count=2)
    body = resource(api_v1.post(f"/monitoring-rules/{rule.pk}", {"maxCount": 5}), "v1")
    assert body["maxCount"] == 5
    assert MonitoringRule.objects.get(pk=rule.pk).max_count == 5


def test_patch_validation_errors(api, institution):
    rule = make_rule(institution, "velocity_count", window_seconds=60, max_count=2)
    path = f"/monitoring-rules/{rule.pk}"
    cases = [
        (
            {"kind": "velocity_amount"},
            {
                "kind": "A rule's kind cannot change (this one is velocity_count): create a new "
                "rule and disable this one."
            },
        ),
        ({"maxAmount": 5}, {"maxAmount": "Not a parameter of velocity_count rules."}),
        ({"maxCount": None}, {"maxCount": "This field may not be null."}),
        ({"countries": ["276"]}, {"countries": "Not a parameter of velocity_count rules."}),
        ({}, {"body": "Give at least one field."}),
    ]
    for body, details in cases:
        assert_validation_error(api.patch(path, body), api.version, details)
    stored = MonitoringRule.objects.get(pk=rule.pk)
    assert (stored.kind, stored.window_seconds, stored.max_count) == ("velocity_count", 60, 2)


# --- alerts
@pytest.fixture
def alerts(institution, other_institution):
    """Alerts of two cards and two rules of the institution (one resolved), and one of another
    institution."""
    card, other_card = active_card(institution), active_card(institution)
    big = threshold(institution, amount=1_000, action="decline")
    mcc = make_rule(institution, "blocked_mcc", mccs=["5411"])
    [big_alert, mcc_alert] = raise_alerts(card, 5_000, subject_id="auth_A")
    [mcc_other] = raise_alerts(other_card, 10, subject_id="auth_B")
    [transfer_alert] = raise_alerts(
        other_card, 2_000, merchant=None, subject_type="transfer", subject_id=None
    )
    staff = User.objects.create_user("reviewer", is_staff=True)
    alert_resolve(alert=mcc_alert, user=staff, note="Known grocery store.")
    threshold(other_institution, amount=1)
    foreign = raise_alerts(active_card(other_institution), 5)
    return {
        "card": card,
        "other_card": other_card,
        "big": big,
        "mcc": mcc,
        "big_alert": big_alert,
        "mcc_alert": mcc_alert,
        "mcc_other": mcc_other,
        "transfer_alert": transfer_alert,
        "foreign": foreign[0],
    }


def alert_ids(api, **params) -> list[str]:
    items, _ = listed(api.get("/monitoring-alerts", {"limit": 100, **params}))
    return [item["alertId"] for item in items]


def test_list_alerts_newest_first_and_filtered(api, alerts):
    everything = [
        alerts["transfer_alert"].pk,
        alerts["mcc_other"].pk,
        alerts["mcc_alert"].pk,
        alerts["big_alert"].pk,
    ]
    # Ids made within one millisecond do not sort by time: compare as sets, then check order.
    listed_ids = alert_ids(api)
    assert set(listed_ids) == set(everything)
    assert listed_ids == sorted(listed_ids, reverse=True)
    assert set(alert_ids(api, status="resolved")) == {alerts["mcc_alert"].pk}
    assert set(alert_ids(api, status="open")) == set(everything) - {alerts["mcc_alert"].pk}
    assert set(alert_ids(api, cardId=alerts["card"].pk)) == {
        alerts["big_alert"].pk,
        alerts["mcc_alert"].pk,
    }
    assert set(alert_ids(api, ruleId=alerts["mcc"].pk)) == {
        alerts["mcc_alert"].pk,
        alerts["mcc_other"].pk,
    }
    assert alert_ids(api, ruleId=alerts["mcc"].pk, cardId=alerts["card"].pk, status="open") == []
    assert alert_ids(api, cardId=alerts["foreign"].card_id) == []
    assert alert_ids(api, ruleId=unknown_id("mrl")) == []
    assert_validation_error(
        api.get("/monitoring-alerts", {"status": "closed"}),
        api.version,
        {"status": '"closed" is not a valid choice.'},
    )
    first, cursor = listed(api.get("/monitoring-alerts", {"limit": 3}))
    rest, end = listed(api.get("/monitoring-alerts", {"limit": 3, "cursor": cursor}))
    assert [item["alertId"] for item in first + rest] == listed_ids and end is None


def test_get_an_alert(api, alerts):
    alert, card = alerts["big_alert"], alerts["card"]
    body = resource(api.get(f"/monitoring-alerts/{alert.pk}"), api.version)
    assert prefixed_id("alr").match(body["alertId"]) and TIMESTAMP.match(body["createdAt"])
    assert body == {
        "alertId": alert.pk,
        "ruleId": alerts["big"].pk,
        "kind": "amount_threshold",
        "action": "decline",
        "status": "open",
        "cardId": card.pk,
        "accountId": None,  # a staff_changes alert's (tests/backoffice/test_four_eyes_thresholds)
        "subjectType": "authorization",
        "subjectId": "auth_A",
        "amount": 5_000,
        "currency": "EUR",
        "merchant": MERCHANT_SNAPSHOT,
        "details": {
            "amount": 5_000,
            "thresholdAmount": 1_000,
            "currency": "EUR",
            "riskLevel": Card.RiskLevel.LOW,
        },
        "resolvedAt": None,
        "resolutionNote": "",
        "createdAt": body["createdAt"],
    }
    resolved = resource(api.get(f"/monitoring-alerts/{alerts['mcc_alert'].pk}"), api.version)
    assert resolved["status"] == "resolved" and TIMESTAMP.match(resolved["resolvedAt"])
    assert resolved["resolutionNote"] == "Known grocery store."
    assert "resolvedBy" not in resolved
    transfer = resource(api.get(f"/monitoring-alerts/{alerts['transfer_alert'].pk}"), api.version)
    assert (transfer["subjectType"], transfer["subjectId"], transfer["merchant"]) == (
        "transfer",
        None,
        None,
    )


def test_another_institutions_alert_is_not_found(api, alerts):
    for alert_id in [alerts["foreign"].pk, unknown_id("alr")]:
        assert_error(
            api.get(f"/monitoring-alerts/{alert_id}"),
            api.version,
            404,
            "not_found",
            message="No monitoring alert with this id.",
        )


def test_alerts_are_not_written_through_the_api(api, alerts):
    alert = alerts["big_alert"]
    assert_error(api.post("/monitoring-alerts", {}), api.version, 405, "method_not_allowed")
    assert_error(
        api.patch(f"/monitoring-alerts/{alert.pk}", {"status": "resolved"}),
        api.version,
        405,
        "method_not_allowed",
    )
