"""Screening: which of an institution's enabled rules a payment about to be made would hit.

Read-only and cheap, so that card authorizations and card transfers can run it on every payment
inside their own transaction: one query for the rules and, only when a velocity rule applies,
one aggregate over the card's payment log (`cards.models.CardPayment`). Velocity is exact when
the caller holds the card's row lock (`cards.services.lock_card`) across screening and counting
the payment, as authorizations and card transfers do: two payments of a card cannot both be
screened against the same history.

What hits (docs/monitoring.md has the same, with examples):
- amount_threshold: the payment is in the rule's currency, the rule has no risk level or the
  card's, and `amount > rule.amount`.
- velocity_count: the card's payments in the window plus this one are more than `max_count`
  (with max_count 3 the fourth payment within the window hits).
- velocity_amount: the payment is in the rule's currency and the card's payments in that
  currency in the window plus this amount are more than `max_amount`.
- blocked_mcc / blocked_country: the merchant's `mcc` / `country_code` is in the rule's list; a
  payment without a merchant (a card transfer) never hits them.
The window of a velocity rule is `created_at > now - window_seconds`, over the payments of the
card's chain (`card.lineage_root_id`: a renewed or replaced card continues its predecessor's).
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from django.db.models import Count, Q, Sum
from django.utils import timezone

from cards.models import Card, CardPayment

from ..models import MonitoringRule

K = MonitoringRule.Kind


class Hit(NamedTuple):
    rule: MonitoringRule
    details: dict  # why it hit, in the API's words (the alert's `details`)


@dataclass(frozen=True)
class Screening:
    """The rules one payment hits, in the order the rules were created."""

    hits: list[Hit] = field(default_factory=list)

    @property
    def declined(self) -> bool:
        """Some rule that hit says decline: the payment must be refused
        (422 `declined_by_monitoring`)."""
        return any(hit.rule.action == MonitoringRule.Action.DECLINE for hit in self.hits)

    @property
    def declining(self) -> list[Hit]:
        """The hits of decline rules (for the refusal's details)."""
        return [hit for hit in self.hits if hit.rule.action == MonitoringRule.Action.DECLINE]


def screen(
    *,
    card: Card,
    amount: int,
    currency: str,
    merchant: dict | None,
    now: datetime | None = None,
) -> Screening:
    """Evaluate the enabled rules of `card`'s institution against one payment of `amount`
    `currency` (minor units) that `card` is about to make. `merchant`: {"name", "mcc",
    "country_code", "channel"} for an authorization, None for a card transfer. Writes nothing;
    at most two queries."""
    now = now or timezone.now()
    rules = list(
        MonitoringRule.objects.filter(institution_id=card.institution_id, enabled=True).order_by(
            "created_at", "id"
        )
    )
    velocity = [
        rule
        for rule in rules
        if rule.kind == K.VELOCITY_COUNT
        or (rule.kind == K.VELOCITY_AMOUNT and rule.currency == currency)
    ]
    totals = _window_totals(card, velocity, now) if velocity else {}
    hits = []
    for rule in rules:
        details = _check(rule, card, amount, currency, merchant, totals)
        if details is not None:
            hits.append(Hit(rule, details))
    return Screening(hits=hits)


def _window_totals(card: Card, rules: list[MonitoringRule], now: datetime) -> dict[str, int]:
    """Per velocity rule: the number (velocity_count) or the sum in the rule's currency
    (velocity_amount) of the card chain's payments in the rule's window. One query."""
    aggregates = {}
    for index, rule in enumerate(rules):
        in_window = Q(created_at__gt=now - timedelta(seconds=rule.window_seconds))
        if rule.kind == K.VELOCITY_COUNT:
            aggregates[f"r{index}"] = Count("id", filter=in_window)
        else:
            aggregates[f"r{index}"] = Sum("amount", filter=in_window & Q(currency=rule.currency))
    widest = max(rule.window_seconds for rule in rules)
    totals = CardPayment.objects.filter(
        card_id=card.lineage_root_id, created_at__gt=now - timedelta(seconds=widest)
    ).aggregate(**aggregates)
    return {rule.pk: totals[f"r{index}"] or 0 for index, rule in enumerate(rules)}


def _check(rule, card, amount, currency, merchant, totals) -> dict | None:
    """The hit's details when `rule` hits this payment, else None."""
    if rule.kind == K.AMOUNT_THRESHOLD:
        if (
            currency == rule.currency
            and rule.risk_level in (None, card.risk_level)
            and amount > rule.amount
        ):
            return {
                "amount": amount,
                "threshold_amount": rule.amount,
                "currency": currency,
                "risk_level": card.risk_level,
            }
    elif rule.kind == K.VELOCITY_COUNT:
        count = totals[rule.pk] + 1
        if count > rule.max_count:
            return {
                "count": count,
                "max_count": rule.max_count,
                "window_seconds": rule.window_seconds,
            }
    elif rule.kind == K.VELOCITY_AMOUNT:
        if currency == rule.currency:
            total = totals[rule.pk] + amount
            if total > rule.max_amount:
                return {
                    "total": total,
                    "max_amount": rule.max_amount,
                    "currency": currency,
                    "window_seconds": rule.window_seconds,
                }
    elif rule.kind == K.BLOCKED_MCC:
        mcc = (merchant or {}).get("mcc")
        if mcc is not None and mcc in rule.mccs:
            return {"mcc": mcc}
    elif rule.kind == K.BLOCKED_COUNTRY:
        country = (merchant or {}).get("country_code")
        if country is not None and country in rule.countries:
            return {"country_code": country}
    return None
