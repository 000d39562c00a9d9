"""Card limits and what a card has spent against them.

Limits are per transaction, per day, per month and per day in cash, in minor units of the
account's currency. Spending is counted per calendar day in the institution's time zone
(`cards.dates`) in `CardSpend` rows keyed by the card's lineage, so a renewed or replaced card
continues its predecessor's count. `spend` must run with the card locked (`lock_card`): two
concurrent payments of one card are serialized on its row and cannot both pass a limit.
"""

from dataclasses import dataclass
from datetime import date

from django.db import connection, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from core.exceptions import LimitExceeded, ValidationFailed
from events.services import emit_for

from ..dates import today_of
from ..locks import lock_card
from ..models import Card, CardPayment, CardSpend
from .status import require_not_final

# A card's limits (the API's names of these: `api.names`).
LIMIT_FIELDS = ("limit_per_transaction", "limit_daily", "limit_monthly", "limit_daily_cash")


@dataclass(frozen=True)
class Usage:
    day: date
    daily: int
    daily_cash: int
    monthly: int

    @property
    def month(self) -> str:
        return f"{self.day:%Y-%m}"


def card_usage(card: Card, *, day: date | None = None) -> Usage:
    """What the card's lineage has spent on `day` (default: today) and in its month: one query."""
    day = day or today_of(card.institution)
    totals = CardSpend.objects.filter(
        card_id=card.lineage_root_id, day__gte=day.replace(day=1), day__lte=day
    ).aggregate(
        monthly=Sum("spent"),
        daily=Sum("spent", filter=Q(day=day)),
        daily_cash=Sum("cash_spent", filter=Q(day=day)),
    )
    return Usage(
        day=day,
        daily=totals["daily"] or 0,
        daily_cash=totals["daily_cash"] or 0,
        monthly=totals["monthly"] or 0,
    )


def spend(card: Card, amount: int, *, currency: str | None = None, cash: bool = False) -> date:
    """Check `amount` (in `currency`, default the account's) against the card's limits
    (`check_limits`) and count it (`count_payment`). The card must be locked by the caller's
    transaction. Returns the day counted."""
    usage = check_limits(card, amount, cash=cash)
    currency = currency or card.account.currency
    count_payment(card, usage.day, amount, currency=currency, cash=cash)
    return usage.day


def check_limits(card: Card, amount: int, *, cash: bool = False) -> Usage:
    """422 `limit_exceeded` (`details.limit` names it: perTransaction, daily, monthly,
    dailyCash) when `amount` does not fit; else today's usage. Writes nothing."""
    usage = card_usage(card)
    checks = [
        ("perTransaction", card.limit_per_transaction, 0),
        ("daily", card.limit_daily, usage.daily),
        ("monthly", card.limit_monthly, usage.monthly),
    ]
    if cash:
        checks.append(("dailyCash", card.limit_daily_cash, usage.daily_cash))
    for name, limit, used in checks:
        if used + amount > limit:
            raise LimitExceeded(
                f"The card's {name} limit does not allow this amount.",
                details={
                    "limit": name,
                    "value": limit,
                    "used": used,
                    "amount": amount,
                    "remaining": max(limit - used, 0),
                },
            )
    return usage


def count_payment(card: Card, day: date, amount: int, *, currency: str, cash: bool) -> None:
    """Count an approved payment: on the day's limit counters and in the payment log that
    velocity monitoring reads. The card must be locked by the caller's transaction."""
    _count(card, day, amount, amount if cash else 0)
    CardPayment.objects.create(
        card_id=card.lineage_root_id, amount=amount, currency=currency, cash=cash
    )


def unspend(card: Card, day: date, amount: int, *, cash: bool = False) -> None:
    """Give back `amount` counted on `day` (a reversed or expired authorization, or one
    presented for less)."""
    _count(card, day, -amount, -amount if cash else 0)


def spend_more(card: Card, day: date, amount: int, *, cash: bool = False) -> None:
    """Count `amount` more on `day` without a limit check: a presentment above its
    authorization, which the network has already cleared."""
    _count(card, day, amount, amount if cash else 0)


def _count(card: Card, day: date, amount: int, cash: int) -> None:
    # One upsert: the day's row is created by its first payment. Negative deltas (unspend)
    # never take a counter below zero.
    with connection.cursor() as cursor:
        cursor.execute(_COUNT_SQL, [card.lineage_root_id, day, amount, cash, amount, cash])


_COUNT_SQL = """
    INSERT INTO cards_cardspend AS s (card_id, day, spent, cash_spent)
    VALUES (%s, %s, GREATEST(%s, 0), GREATEST(%s, 0))
    ON CONFLICT (card_id, day) DO UPDATE
    SET spent = GREATEST(s.spent + %s, 0), cash_spent = GREATEST(s.cash_spent + %s, 0)
"""


def card_limits_set(*, card: Card, changes: dict) -> Card:
    """Change some of the card's limits (domain names of LIMIT_FIELDS). The result must be
    ordered: perTransaction <= daily <= monthly and dailyCash <= daily (400 otherwise). Emits
    `card.limits_changed` with the limits after the change; no change emits nothing."""
    unknown = set(changes) - set(LIMIT_FIELDS)
    if unknown:
        raise ValueError(f"Not limits: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        check_limits_order(card, changes)
        changed = [field for field, value in changes.items() if getattr(card, field) != value]
        for field in changed:
            setattr(card, field, changes[field])
        if changed:
            card.updated_at = timezone.now()
            card.save(update_fields=[*changed, "updated_at"])
            emit_for(
                card,
                "card.limits_changed",
                data={
                    "changed_fields": sorted(changed),
                    "limits": {field: getattr(card, field) for field in LIMIT_FIELDS},
                },
            )
    return card


def check_limits_order(card: Card, changes: dict) -> None:
    """400 `validation_error` when the card's limits with `changes` (domain names of
    LIMIT_FIELDS) would be out of order: perTransaction <= daily <= monthly, dailyCash <=
    daily."""
    limits = {field: changes.get(field, getattr(card, field)) for field in LIMIT_FIELDS}
    errors = {}
    if limits["limit_per_transaction"] > limits["limit_daily"]:
        errors["limit_per_transaction"] = "Must not be above the daily limit."
    if limits["limit_daily"] > limits["limit_monthly"]:
        errors["limit_daily"] = "Must not be above the monthly limit."
    if limits["limit_daily_cash"] > limits["limit_daily"]:
        errors["limit_daily_cash"] = "Must not be above the daily limit."
    if errors:
        raise ValidationFailed(details=errors)
