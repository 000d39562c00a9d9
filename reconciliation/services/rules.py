"""The institution's reconciliation rules (docs/reconciliation.md, "Rules"): ordered, each a
list of conditions (a field of the statement line compared with the ledger line's, by an
operator), an amount tolerance, a date window and a cardinality. A new rule goes last."""

from django.db import IntegrityError, transaction
from django.db.models import Max

from core.actors import Actor
from core.exceptions import ValidationFailed
from events.services import emit_for

from ..models import ReconciliationRule

FIELDS = ("amount", "end_to_end_id", "trace_number", "bank_reference", "remittance")
OPERATORS = ("equals", "contains")
MAX_TOLERANCE = 1_000_000_00
MAX_WINDOW_DAYS = 31
Cardinality = ReconciliationRule.Cardinality


def _checked(conditions: list[dict], cardinality: str) -> list[dict]:
    seen = set()
    for condition in conditions:
        field, operator = condition["field"], condition["operator"]
        if field not in FIELDS or operator not in OPERATORS:
            raise ValidationFailed(details={"conditions": f"{field} {operator}: not a condition."})
        if field == "amount" and operator != "equals":
            raise ValidationFailed(details={"conditions": "amount compares with equals only."})
        if field in seen:
            raise ValidationFailed(details={"conditions": f"{field} named twice."})
        seen.add(field)
    # A rule that pairs several lines at once needs something besides the amount to group
    # them by: the sum of every line of a day is not a batch.
    if cardinality != Cardinality.ONE_TO_ONE and not seen - {"amount"}:
        raise ValidationFailed(
            details={"conditions": f"{cardinality} needs a condition other than amount."}
        )
    if not seen:
        raise ValidationFailed(details={"conditions": "At least one condition."})
    return [{"field": c["field"], "operator": c["operator"]} for c in conditions]


def reconciliation_rule_create(
    *,
    institution,
    name: str,
    conditions: list[dict],
    cardinality: str,
    amount_tolerance: int = 0,
    date_window_days: int = 0,
    actor: Actor | None = None,
) -> ReconciliationRule:
    conditions = _checked(conditions, cardinality)
    for _ in range(3):
        try:
            with transaction.atomic():
                last = ReconciliationRule.objects.filter(institution=institution).aggregate(
                    last=Max("position")
                )["last"]
                rule = ReconciliationRule.objects.create(
                    institution=institution,
                    name=name,
                    position=(last or 0) + 1,
                    conditions=conditions,
                    cardinality=cardinality,
                    amount_tolerance=amount_tolerance,
                    date_window_days=date_window_days,
                )
                emit_for(
                    rule,
                    "reconciliation_rule.created",
                    data={"reconciliation_rule_id": rule.pk, "position": rule.position},
                    actor=actor,
                )
            return rule
        except IntegrityError:
            # Another rule took the position at the same moment (the unique constraint): the
            # next one.
            continue
    raise IntegrityError("reconciliation rule position")
