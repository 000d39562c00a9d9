"""Calendar days of an institution: card limits count per day and month in its time zone, and a
card is valid through the last day of its expiry month there."""

from datetime import date

from django.utils import timezone

from institutions.calendar import local_date
from institutions.models import Institution


def today_of(institution: Institution) -> date:
    return local_date(institution, timezone.now())


def is_past_expiry(card) -> bool:
    return card.expires_on < today_of(card.institution)


def add_months(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1
