"""Monitoring rules through their services: each kind takes exactly its parameters, values are
checked whoever calls, changes emit events, and the database refuses a rule that breaks the
kind's parameters even when Python is bypassed."""

import pytest
from django.db import IntegrityError, transaction

from core.exceptions import ValidationFailed
from events.models import Event
from events.payloads import event_payload
from monitoring.models import KIND_PARAMETERS, MAX_WINDOW_SECONDS, MonitoringRule
from monitoring.services import monitoring_rule_create, monitoring_rule_update
from tests.cards.helpers import make_institution
from tests.monitoring.helpers import make_rule, threshold

pytestmark = pytest.mark.django_db

VALID = {
    "amount_threshold": {"amount": 10_000, "currency": "EUR", "risk_level": "high"},
    "velocity_count": {"window_seconds": 3600, "max_count": 3},
    "velocity_amount": {"window_seconds": 86_400, "max_amount": 50_000, "currency": "EUR"},
    "blocked_mcc": {"mccs": ["7995", "5993"]},
    "blocked_country": {"countries": ["408", "364"]},
}
API = {
    "risk_level": "riskLevel",
    "amount": "amount",
    "currency": "currency",
    "window_seconds": "windowSeconds",
    "max_count": "maxCount",
    "max_amount": "maxAmount",
    "mccs": "mccs",
    "countries": "countries",
}
ALL_NULL = dict.fromkeys(API)
SOME_VALUE = {name: value for parameters in VALID.values() for name, value in parameters.items()}


def details_of(excinfo) -> dict:
    return excinfo.value.details


def rule_events(rule, type_):
    events = Event.objects.filter(object_id=rule.pk, type=type_).order_by("created_at", "id")
    return [event_payload(event)["data"] for event in events]


def test_every_kind_has_its_parameters():
    assert set(KIND_PARAMETERS) == set(MonitoringRule.Kind.values)
    assert set(VALID) == set(MonitoringRule.Kind.values)


@pytest.mark.parametrize("kind", list(VALID))
def test_create_each_kind_stores_its_parameters_and_nothing_else(kind):
    fi = make_institution()
    rule = monitoring_rule_create(
        institution=fi, name="  Big spender  ", kind=kind, action="decline", **VALID[kind]
    )
    rule = MonitoringRule.objects.get(pk=rule.pk)
    assert rule.pk.startswith("mrl_") and len(rule.pk) == 30
    assert (rule.institution_id, rule.name, rule.kind, rule.action, rule.enabled) == (
        fi.pk,
        "Big spender",
        kind,
        "decline",
        True,
    )
    stored = {name: getattr(rule, name) for name in API}
    expected = {**ALL_NULL, **VALID[kind]}
    for name in ("mccs", "countries"):  # stored sorted
        if expected[name] is not None:
            expected[name] = sorted(expected[name])
    assert stored == expected
    assert rule.parameters == {name: expected[name] for name in KIND_PARAMETERS[kind]}
    assert rule_events(rule, "monitoring.rule_created") == [
        {"ruleId": rule.pk, "kind": kind, "action": "decline", "enabled": True}
    ]


def test_lists_are_sorted_without_duplicates_and_risk_level_is_optional():
    fi = make_institution()
    rule = make_rule(fi, "blocked_mcc", mccs=["7995", "5411", "7995"])
    assert rule.mccs == ["5411", "7995"]
    rule = make_rule(fi, "blocked_country", countries=["840", "276", "840"])
    assert rule.countries == ["276", "840"]
    rule = threshold(fi)  # no risk level: any card
    assert rule.risk_level is None
    rule = threshold(fi, risk_level=None)
    assert rule.risk_level is None
    disabled = make_rule(fi, "velocity_count", window_seconds=60, max_count=1, enabled=False)
    assert disabled.enabled is False


@pytest.mark.parametrize("kind", list(VALID))
def test_a_parameter_of_another_kind_is_refused_even_as_none(kind):
    fi = make_institution()
    for other in set(API) - set(KIND_PARAMETERS[kind]):
        for value in [None, SOME_VALUE[other]]:
            with pytest.raises(ValidationFailed) as excinfo:
                monitoring_rule_create(
                    institution=fi,
                    name="x",
                    kind=kind,
                    action="alert",
                    **VALID[kind],
                    **{other: value},
                )
            assert details_of(excinfo) == {other: f"Not a parameter of {kind} rules."}
    assert not MonitoringRule.objects.exists()


@pytest.mark.parametrize("kind", list(VALID))
def test_missing_required_parameters_are_refused(kind):
    fi = make_institution()
    required = [name for name in KIND_PARAMETERS[kind] if name != "risk_level"]
    with pytest.raises(ValidationFailed) as excinfo:
        monitoring_rule_create(institution=fi, name="x", kind=kind, action="alert")
    assert details_of(excinfo) == {name: f"Required for {kind} rules." for name in required}
    for name in required:
        given = {k: v for k, v in VALID[kind].items() if k != name}
        with pytest.raises(ValidationFailed) as excinfo:
            monitoring_rule_create(institution=fi, name="x", kind=kind, action="alert", **given)
        assert details_of(excinfo) == {name: f"Required for {kind} rules."}
    assert not MonitoringRule.objects.exists()


@pytest.mark.parametrize(
    ("kind", "field", "value", "message"),
    [
        ("amount_threshold", "amount", 0, "an integer from 1"),
        ("amount_threshold", "amount", "100", "an integer from 1"),
        ("amount_threshold", "amount", True, "an integer from 1"),
        ("amount_threshold", "amount", 10**15 + 1, "an integer from 1"),
        ("amount_threshold", "currency", "eur", "ISO 4217"),
        ("amount_threshold", "currency", "XYZ", "XYZ is not an ISO 4217"),
        ("amount_threshold", "risk_level", "extreme", "low, medium, high"),
        ("velocity_count", "window_seconds", 0, "31 days at most"),
        ("velocity_count", "window_seconds", MAX_WINDOW_SECONDS + 1, "31 days at most"),
        ("velocity_count", "max_count", 0, "a number of payments"),
        ("velocity_amount", "max_amount", -5, "an amount in minor units"),
        ("blocked_mcc", "mccs", [], "non-empty list"),
        ("blocked_mcc", "mccs", "7995", "non-empty list"),
        ("blocked_mcc", "mccs", ["7995", "799"], "Not merchant category codes"),
        ("blocked_mcc", "mccs", ["7995\n"], "Not merchant category codes"),
        ("blocked_mcc", "mccs", [str(1000 + n) for n in range(201)], "At most 200"),
        ("blocked_country", "countries", ["999"], "Not ISO 3166-1"),
        ("blocked_country", "countries", ["DE"], "Not ISO 3166-1"),
    ],
)
def test_values_are_checked(kind, field, value, message):
    with pytest.raises(ValidationFailed) as excinfo:
        monitoring_rule_create(
            institution=make_institution(),
            name="x",
            kind=kind,
            action="alert",
            **{**VALID[kind], field: value},
        )
    assert list(details_of(excinfo)) == [field]
    assert message in details_of(excinfo)[field]


def test_window_and_count_bounds_are_inclusive():
    fi = make_institution()
    assert make_rule(fi, "velocity_count", window_seconds=1, max_count=1).window_seconds == 1
    rule = make_rule(fi, "velocity_count", window_seconds=MAX_WINDOW_SECONDS, max_count=1)
    assert rule.window_seconds == 31 * 86_400


def test_name_action_and_kind_are_checked():
    fi = make_institution()
    cases = [
        ({"name": "   "}, {"name": "Must be a non-empty string."}),
        ({"name": "x" * 201}, {"name": "At most 200 characters."}),
        ({"action": "block"}, {"action": "Must be one of alert, decline."}),
        ({"enabled": "yes"}, {"enabled": "Must be true or false."}),
    ]
    for change, details in cases:
        arguments = {"name": "ok", "kind": "blocked_mcc", "action": "alert", "mccs": ["7995"]}
        with pytest.raises(ValidationFailed) as excinfo:
            monitoring_rule_create(institution=fi, **{**arguments, **change})
        assert details_of(excinfo) == details
    with pytest.raises(ValidationFailed) as excinfo:
        monitoring_rule_create(institution=fi, name="x", kind="velocity", action="alert")
    assert list(details_of(excinfo)) == ["kind"]
    with pytest.raises(ValueError, match="Not rule parameters"):
        monitoring_rule_create(institution=fi, name="x", kind="blocked_mcc", action="alert", mcc=1)


# --- update
def test_update_changes_name_action_enabled_and_parameters_and_emits_what_changed():
    rule = threshold(make_institution(), amount=10_000)
    before = rule.updated_at
    outcome = monitoring_rule_update(
        rule=rule,
        changes={
            "name": " Large ",
            "action": "decline",
            "enabled": False,
            "amount": 20_000,
            "risk_level": "medium",
            "currency": "EUR",  # unchanged: not in changedFields
        },
    )
    stored = MonitoringRule.objects.get(pk=rule.pk)
    assert (stored.name, stored.action, stored.enabled, stored.amount, stored.risk_level) == (
        "Large",
        "decline",
        False,
        20_000,
        "medium",
    )
    assert stored.updated_at > before
    assert outcome.changed and outcome.previous == {
        "name": rule.name,
        "action": "alert",
        "enabled": True,
        "amount": 10_000,
        "risk_level": None,
    }
    assert rule_events(rule, "monitoring.rule_updated") == [
        {
            "ruleId": rule.pk,
            "changedFields": ["action", "amount", "enabled", "name", "riskLevel"],
        }
    ]
    # riskLevel None: any card again.
    monitoring_rule_update(rule=rule, changes={"risk_level": None})
    assert MonitoringRule.objects.get(pk=rule.pk).risk_level is None


def test_update_without_a_change_emits_nothing():
    rule = make_rule(make_institution(), "blocked_mcc", mccs=["7995", "5411"])
    same = monitoring_rule_update(
        rule=rule, changes={"mccs": ["5411", "7995", "5411"], "kind": "blocked_mcc"}
    )
    assert not same.changed and not monitoring_rule_update(rule=rule, changes={}).changed
    assert rule_events(rule, "monitoring.rule_updated") == []


def test_update_refuses_another_kind_foreign_parameters_and_removing_required_ones():
    rule = make_rule(make_institution(), "velocity_count", window_seconds=3600, max_count=3)
    cases = [
        ({"kind": "velocity_amount"}, "kind"),
        ({"max_amount": 100}, "max_amount"),
        ({"mccs": None}, "mccs"),
        ({"max_count": None}, "max_count"),
        ({"window_seconds": 0}, "window_seconds"),
        ({"name": ""}, "name"),
    ]
    for changes, field in cases:
        with pytest.raises(ValidationFailed) as excinfo, transaction.atomic():
            monitoring_rule_update(rule=rule, changes=changes)
        assert list(details_of(excinfo)) == [field], changes
    with pytest.raises(ValidationFailed) as excinfo, transaction.atomic():
        monitoring_rule_update(rule=rule, changes={"kind": "blocked_mcc", "max_count": None})
    assert details_of(excinfo) == {
        "kind": "A rule's kind cannot change (this one is velocity_count): create a new rule "
        "and disable this one.",
        "max_count": "Required for velocity_count rules.",
    }
    stored = MonitoringRule.objects.get(pk=rule.pk)
    assert (stored.kind, stored.window_seconds, stored.max_count) == ("velocity_count", 3600, 3)
    with pytest.raises(ValueError, match="Not rule fields"), transaction.atomic():
        monitoring_rule_update(rule=rule, changes={"institution": None})


# --- the database's own checks (Python bypassed)
@pytest.mark.parametrize(
    ("kind", "update"),
    [
        ("velocity_count", {"mccs": ["7995"]}),
        ("velocity_count", {"max_count": None}),
        ("amount_threshold", {"window_seconds": 60}),
        ("amount_threshold", {"currency": None}),
        ("blocked_mcc", {"mccs": []}),
        ("blocked_country", {"risk_level": "high"}),
        ("velocity_amount", {"max_amount": 0}),
        ("velocity_amount", {"window_seconds": MAX_WINDOW_SECONDS + 1}),
        ("blocked_mcc", {"kind": "blocked_country"}),
        ("blocked_mcc", {"action": "block"}),
    ],
)
def test_the_database_refuses_a_rule_that_breaks_its_kind(kind, update):
    rule = make_rule(make_institution(), kind, **VALID[kind])
    with pytest.raises(IntegrityError), transaction.atomic():
        MonitoringRule.objects.filter(pk=rule.pk).update(**update)
