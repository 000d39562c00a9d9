"""Monitoring rules: created through the API, changed through the API (PATCH) and the admin
(enable, disable). A rule's kind never changes: its parameters are what it is.

Each service validates what it is given, whoever calls it (the API's serializers have checked
the formats already; the admin has none of its own), and answers 400 `validation_error` with
`details` keyed by the domain's field names (`window_seconds`, `max_count`, ...; the API renders
them in its own, `api.names`): a parameter that does not belong to the rule's kind, a missing
required one, or a value out of range.
"""

import re

import pycountry
from django.db import transaction

from cards.models import Card
from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT
from core.operations import Outcome, changed, unchanged
from core.rows import row_update
from events.services import emit_for
from institutions.models import Institution

from ..locks import lock_rule
from ..models import (
    KIND_PARAMETERS,
    MAX_WINDOW_SECONDS,
    OPTIONAL_PARAMETERS,
    PARAMETERS,
    MonitoringRule,
)

# A rule's fields (the API's names of these: `api.names`).
FIELDS = (
    "name",
    "kind",
    "action",
    "enabled",
    "risk_level",
    "amount",
    "currency",
    "window_seconds",
    "max_count",
    "max_amount",
    "mccs",
    "countries",
)
MAX_NAME_LENGTH = 200
MAX_COUNT = 1_000_000
MAX_MCCS = 200
MAX_COUNTRIES = 250
MCC_RE = re.compile(r"[0-9]{4}")


def monitoring_rule_create(
    *,
    institution: Institution,
    name: str,
    kind: str,
    action: str,
    enabled: bool = True,
    **parameters,
) -> MonitoringRule:
    """Create a rule of `kind` with its parameters (domain names: `risk_level`, `amount`,
    `currency`, `window_seconds`, `max_count`, `max_amount`, `mccs`, `countries`).

    Every required parameter of the kind must be given and no parameter of another kind may be
    (even as None); `risk_level` is optional (None: any card). Lists are stored sorted, without
    duplicates. 400 `validation_error` otherwise. Emits `monitoring.rule_created`.
    """
    unknown = set(parameters) - set(PARAMETERS)
    if unknown:
        raise ValueError(f"Not rule parameters: {sorted(unknown)}")
    if kind not in KIND_PARAMETERS:
        raise ValidationFailed(details={"kind": f"Must be one of {', '.join(KIND_PARAMETERS)}."})
    errors: dict[str, str] = {}
    values = _clean_common({"name": name, "action": action, "enabled": enabled}, errors)
    values |= _clean_parameters(kind, parameters, errors, creating=True)
    if errors:
        raise ValidationFailed(details=errors)
    rule = MonitoringRule(institution=institution, kind=kind, **values)
    with transaction.atomic(savepoint=False):
        rule.save(force_insert=True)
        emit_for(
            rule,
            "monitoring.rule_created",
            data={
                "rule_id": rule.pk,
                "kind": rule.kind,
                "action": rule.action,
                "enabled": rule.enabled,
            },
        )
    return rule


def monitoring_rule_update(*, rule: MonitoringRule, changes: dict) -> Outcome[MonitoringRule]:
    """Change a rule: `name`, `action`, `enabled` and the parameters of its kind (domain names;
    None removes an optional parameter). `kind` may be named only with the rule's own kind:
    a rule never changes kind (400). The rest is validated as `monitoring_rule_create` does.
    Emits `monitoring.rule_updated` with the API names of what changed; no change emits
    nothing (`Outcome.changed` false). `Outcome.previous` has the old values of what changed."""
    unknown = set(changes) - set(FIELDS)
    if unknown:
        raise ValueError(f"Not rule fields: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        rule = lock_rule(rule.pk)
        errors: dict[str, str] = {}
        if "kind" in changes and changes["kind"] != rule.kind:
            errors["kind"] = (
                f"A rule's kind cannot change (this one is {rule.kind}): create a new rule "
                "and disable this one."
            )
        common = {
            field: changes[field] for field in ("name", "action", "enabled") if field in changes
        }
        values = _clean_common(common, errors)
        parameters = {field: changes[field] for field in PARAMETERS if field in changes}
        values |= _clean_parameters(rule.kind, parameters, errors, creating=False)
        if errors:
            raise ValidationFailed(details=errors)
        previous = row_update(rule, values)
        if not previous:
            return unchanged(rule)
        emit_for(
            rule,
            "monitoring.rule_updated",
            data={
                "rule_id": rule.pk,
                "changed_fields": sorted(previous),
            },
        )
    return changed(rule, previous)


# --- validation
def _clean_common(values: dict, errors: dict) -> dict:
    cleaned = {}
    if "name" in values:
        name = values["name"]
        if not isinstance(name, str) or not name.strip():
            errors["name"] = "Must be a non-empty string."
        elif len(name.strip()) > MAX_NAME_LENGTH:
            errors["name"] = f"At most {MAX_NAME_LENGTH} characters."
        else:
            cleaned["name"] = name.strip()
    if "action" in values:
        if values["action"] not in MonitoringRule.Action.values:
            errors["action"] = f"Must be one of {', '.join(MonitoringRule.Action.values)}."
        else:
            cleaned["action"] = values["action"]
    if "enabled" in values:
        if not isinstance(values["enabled"], bool):
            errors["enabled"] = "Must be true or false."
        else:
            cleaned["enabled"] = values["enabled"]
    return cleaned


def _clean_parameters(kind: str, given: dict, errors: dict, *, creating: bool) -> dict:
    """The kind's parameters from `given`: on creation all of them (missing ones None), on an
    update only those given."""
    own = KIND_PARAMETERS[kind]
    for field in given:
        if field not in own:
            errors[field] = f"Not a parameter of {kind} rules."
    cleaned = {}
    for field in own:
        if field not in given and not creating:
            continue
        value = given.get(field)
        if value is None:
            if field not in OPTIONAL_PARAMETERS:
                errors[field] = f"Required for {kind} rules."
            cleaned[field] = None
            continue
        try:
            cleaned[field] = _CLEANERS[field](value)
        except ValueError as exc:
            errors[field] = str(exc)
    return cleaned


def _integer(value, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"Must be {what}: an integer from {low} to {high}.")
    return value


def _risk_level(value) -> str:
    if value not in Card.RiskLevel.values:
        raise ValueError(f"Must be one of {', '.join(Card.RiskLevel.values)}, or null (any card).")
    return value


def _currency(value) -> str:
    if not isinstance(value, str) or len(value) != 3 or not value.isupper():
        raise ValueError('Must be an ISO 4217 alpha-3 currency code, e.g. "EUR".')
    if pycountry.currencies.get(alpha_3=value) is None:
        raise ValueError(f"{value} is not an ISO 4217 currency code.")
    return value


def _codes(value, *, valid, most: int, what: str) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f"Must be a non-empty list of {what}.")
    if len(value) > most:
        raise ValueError(f"At most {most} {what}.")
    bad = [code for code in value if not isinstance(code, str) or not valid(code)]
    if bad:
        raise ValueError(f"Not {what}: {', '.join(map(str, bad))}.")
    return sorted(set(value))


def _is_country(code: str) -> bool:
    return len(code) == 3 and code.isdigit() and pycountry.countries.get(numeric=code) is not None


_CLEANERS = {
    "risk_level": _risk_level,
    "amount": lambda value: _integer(value, 1, MAX_AMOUNT, "an amount in minor units"),
    "currency": _currency,
    "window_seconds": lambda value: _integer(
        value, 1, MAX_WINDOW_SECONDS, "seconds (31 days at most)"
    ),
    "max_count": lambda value: _integer(value, 1, MAX_COUNT, "a number of payments"),
    "max_amount": lambda value: _integer(value, 1, MAX_AMOUNT, "an amount in minor units"),
    "mccs": lambda value: _codes(
        value,
        valid=lambda code: bool(MCC_RE.fullmatch(code)),
        most=MAX_MCCS,
        what="merchant category codes (4 digits)",
    ),
    "countries": lambda value: _codes(
        value,
        valid=_is_country,
        most=MAX_COUNTRIES,
        what="ISO 3166-1 numeric country codes (3 digits)",
    ),
}
