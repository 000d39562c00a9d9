"""Validity jobs (docs/design.md sections 8 and 11): expire the cards whose validity has ended and
renew the ones about to end. `renew_expiring_cards` runs both, expiry first.

A card is valid through the last day of its expiry month in its institution's time zone
(`cards.dates`). No zone is a day or more ahead of UTC, so a card that has ended anywhere has
`expires_on` before UTC's tomorrow: the database narrows the rows by that bound and Python makes
the exact check per institution.

Both jobs are safe to run from several processes at once. Rows are taken with
`SELECT ... FOR UPDATE SKIP LOCKED` (the card row only: `of=("self",)`), so two runs never
handle the same card at once nor wait for each other, and every card is checked again once it
is locked. A card locked by someone else at that moment (a renewal elsewhere, an authorization)
is left for this time; the next run takes it.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.exceptions import TXError

from ..dates import is_past_expiry
from ..locks import cards_skip_locked
from ..models import Card
from .lifecycle import card_renew
from .status import change_status

S = Card.Status
# Renewed ahead of their expiry. An inactive card was never used: it is not renewed unasked.
RENEWED = (S.ACTIVE, S.SUSPENDED)
# Skip reasons besides a TXError's code.
LOCKED = "locked"  # someone else holds the card's row now (a renewal elsewhere, a payment)
NO_LONGER_DUE = "no_longer_due"  # changed since listed: renewed elsewhere, closed, lost...


def cards_expire(*, batch_size: int = 500) -> int:
    """Move every `active` card whose validity has ended to `expired` (reason "validity
    ended"; emits `card.status_changed`) and return how many. Only active cards: the status
    machine has `active -> expired` alone. Each batch is one transaction of its own."""
    horizon = _utc_today() + timedelta(days=1)
    expired = 0
    after = ""
    while True:
        with transaction.atomic(durable=True):
            batch = list(
                cards_skip_locked()
                .filter(status=S.ACTIVE, expires_on__lt=horizon, pk__gt=after)
                .order_by("pk")[:batch_size]
            )
            for card in batch:
                if is_past_expiry(card):
                    change_status(card, S.EXPIRED, "validity ended")
                    expired += 1
        if len(batch) < batch_size:
            return expired
        # Keyset: a card not yet ended in its own zone stays active and must not come back.
        after = batch[-1].pk


@dataclass
class RenewalReport:
    renewed: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> how many

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def cards_renew_expiring(
    *, within_days: int, on_progress: Callable[[int, int], None] | None = None
) -> RenewalReport:
    """Renew (`card_renew`, actor SYSTEM) every active or suspended card without a successor
    whose validity ends within `within_days` days (`expires_on` <= today + N in its
    institution's zone; a card already past it is expired first, by `cards_expire`).

    Each card is renewed in a transaction of its own, after checking again under its row lock
    that it still qualifies. A card whose renewal is refused (a TXError, e.g. 422
    `account_not_active` for a closed account) is skipped and counted under the error's code;
    one another process holds now under `locked`; one that changed since it was listed
    (renewed elsewhere, closed) under `no_longer_due`. `on_progress(done, total)` is called
    after each card.
    """
    if within_days < 0:
        raise ValueError("within_days must be 0 or more")
    due = _due_card_ids(within_days)
    report = RenewalReport()
    for done, card_id in enumerate(due, start=1):
        reason = _renew_one(card_id)
        if reason is None:
            report.renewed += 1
        else:
            report.skipped[reason] += 1
        if on_progress is not None:
            on_progress(done, len(due))
    return report


def _due_card_ids(within_days: int) -> list[str]:
    horizon = _utc_today() + timedelta(days=1 + within_days)
    rows = (
        _renewable(Card.objects.all())
        .filter(expires_on__lte=horizon)
        .order_by("expires_on", "pk")
        .values_list("pk", "expires_on", "institution__time_zone")
    )
    now = timezone.now()
    last_day: dict[str, date] = {}  # time zone -> the last expiry date due there
    due = []
    for card_id, expires_on, zone in rows:
        if zone not in last_day:
            last_day[zone] = timezone.localdate(now, ZoneInfo(zone)) + timedelta(days=within_days)
        if expires_on <= last_day[zone]:
            due.append(card_id)
    return due


def _renew_one(card_id: str) -> str | None:
    """Renew one card in its own transaction; the reason it was skipped, or None."""
    try:
        with transaction.atomic(durable=True):
            card = _renewable(cards_skip_locked()).filter(pk=card_id).first()
            if card is not None:
                card_renew(card=card)
                return None
    except TXError as error:
        return error.code
    still_due = _renewable(Card.objects.all()).filter(pk=card_id).exists()
    return LOCKED if still_due else NO_LONGER_DUE


def _renewable(cards: QuerySet) -> QuerySet:
    return cards.filter(status__in=RENEWED, successor__isnull=True)


def _utc_today() -> date:
    return timezone.now().date()  # timezone.now() is in UTC (USE_TZ)
