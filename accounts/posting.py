"""Posting journals: the only code that writes ledger entries and changes `posted` balances.

Callers (the use-case services) lock the accounts first (`accounts.locks`), check the business
rules (status, currency, funds), then call `post_journal` inside the same transaction. The
database checks the result again at commit (`accounts/sql/ledger_rules.sql`).
"""

from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from institutions.models import Institution

from .models import Account, Entry, Journal

DEBIT = Entry.Direction.DEBIT
CREDIT = Entry.Direction.CREDIT


@dataclass(frozen=True)
class Leg:
    account: Account
    direction: str  # "debit" | "credit"
    amount: int


def post_journal(
    *, institution: Institution, kind: str, currency: str, legs: list[Leg], description: str = ""
) -> Journal:
    """Write one balanced journal and apply it to the stored balances of its accounts."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError(
            "post_journal() must run inside the transaction that locked the accounts."
        )
    total = sum(leg.amount if leg.direction == CREDIT else -leg.amount for leg in legs)
    if len(legs) < 2 or total != 0 or any(leg.amount <= 0 for leg in legs):
        raise ValueError(f"An unbalanced or empty journal: {legs!r}")

    now = timezone.now()
    journal = Journal.objects.create(
        institution=institution, kind=kind, description=description[:500], created_at=now
    )
    Entry.objects.bulk_create(
        Entry(
            journal=journal,
            account=leg.account,
            direction=leg.direction,
            amount=leg.amount,
            currency=currency,
            created_at=now,
        )
        for leg in legs
    )
    deltas: dict[str, int] = defaultdict(int)
    for leg in legs:
        deltas[leg.account.pk] += leg.amount if leg.direction == CREDIT else -leg.amount
    for account_id, delta in sorted(deltas.items()):
        if delta:
            Account.objects.filter(pk=account_id).update(posted=F("posted") + delta, updated_at=now)
    return journal


def change_pending(account: Account, delta: int) -> None:
    """Add `delta` to the account's held amount (a hold placed: +, released or captured: -)."""
    Account.objects.filter(pk=account.pk).update(
        pending=F("pending") + delta, updated_at=timezone.now()
    )
