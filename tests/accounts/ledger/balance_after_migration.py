"""Migration accounts/0016_balance_after on a ledger written before it: the backfill gives
every entry the running sum of its account's entries in id order as `balance_after`, makes the
account's `created_at` non-decreasing in that order, and the rule holds for what is posted
after (the real migration executor, as tests/test_migrations_forward.py).

And migration accounts/0023_hold_changes on holds written before it (test_hold_changes.py has
the steps' rule): every existing hold gets its steps. A part of the upgrade walk of
tests/test_migrations_forward.py: the ledger and holds written at the release before 0016
through the historical models as that release's services left them, checked at the latest
migrations; the two migrations' worlds are separate accounts."""

from datetime import timedelta
from types import SimpleNamespace

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Entry, Hold
from accounts.selectors import balance_at
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from tests.own_database import just_before, made_at
from transfers.services import transfer_create

from .helpers import fresh
from .test_hold_changes import MS, US, place, replay, steps


class OldLedger:
    """Rows as the release before 0016 wrote them: journals of balanced entries (no
    `balance_after` then), the accounts' balances kept beside them, holds."""

    def __init__(self, apps):
        self.apps = apps
        self.institution = apps.get_model("institutions", "Institution").objects.create(
            name="Older Bank", currency="EUR", time_zone="Europe/Paris"
        )
        self.customer = apps.get_model("customers", "Customer").objects.create(
            institution=self.institution, first_name="Ada", last_name="Lovelace", country_code="276"
        )
        self.product = apps.get_model("accounts", "AccountProduct").objects.create(
            institution=self.institution,
            code="AccountPrepaidAPI",
            name="Prepaid account",
            kind="prepaid",
            currency="EUR",
        )
        self.funding = self.account(kind="internal", internal_code="funding")
        self.settlement = self.account(kind="internal", internal_code="settlement")

    def account(self, **fields):
        if "kind" not in fields:
            fields.update(customer=self.customer, product=self.product)
        return self.apps.get_model("accounts", "Account").objects.create(
            institution=self.institution, currency="EUR", available=0, **fields
        )

    def post(self, kind: str, at, debit, credit, amount: int):
        """A journal of `kind` at `at`: `debit` gives `amount` to `credit` (a customer
        account's credit is money in), in one transaction as every posting (a journal has
        entries: a deferred constraint trigger)."""
        with transaction.atomic():
            return self._post(kind, at, debit, credit, amount)

    def _post(self, kind, at, debit, credit, amount):
        journal = self.apps.get_model("accounts", "Journal").objects.create(
            institution=self.institution, kind=kind, description=kind, created_at=at
        )
        Account = self.apps.get_model("accounts", "Account")
        for account, direction, sign in ((debit, "debit", -1), (credit, "credit", 1)):
            self.apps.get_model("accounts", "Entry").objects.create(
                journal=journal,
                account=account,
                direction=direction,
                amount=amount,
                currency="EUR",
                created_at=at,
            )
            account = Account.objects.get(pk=account.pk)
            account.posted += sign * amount
            account.available = account.posted - account.pending
            account.save(update_fields=["posted", "available"])
        return journal

    def hold(self, account, amount: int, at, *, status="active", closed_at=None, captured=0):
        Account = self.apps.get_model("accounts", "Account")
        hold = self.apps.get_model("accounts", "Hold").objects.create(
            institution=self.institution,
            account=account,
            amount=amount,
            captured_amount=captured,
            currency="EUR",
            status=status,
            reason="test",
            expires_at=at + timedelta(days=7),
            created_at=at,
            closed_at=closed_at,
        )
        if status == "active":
            account = Account.objects.get(pk=account.pk)
            account.pending += amount
            account.available = account.posted - account.pending
            account.save(update_fields=["pending", "available"])
        return hold


def written_before_balance_after() -> SimpleNamespace:
    """The database taken to the release before accounts/0016 (as its `migrate` left it), and
    a ledger and holds written there."""
    old = made_at(just_before(("accounts", "0016_balance_after")))
    assert "balance_after" not in {
        field.name for field in old.get_model("accounts", "Entry")._meta.fields
    }
    ledger = OldLedger(old)
    t = timezone.now() - timedelta(hours=1)
    a, b = ledger.account(), ledger.account()
    ledger.post("adjustment", t, ledger.funding, a, 1000)
    ledger.post("transfer", t + timedelta(seconds=10), a, b, 300)
    # A posting that waited on the lock: written after a's last entry, dated before it.
    ledger.post("transfer", t - timedelta(seconds=5), a, b, 50)

    # Holds: placed and released, placed and captured in part, active; another account's.
    held, other_held = ledger.account(), ledger.account()
    ledger.post("adjustment", t, ledger.funding, held, 1000)
    ledger.post("adjustment", t, ledger.funding, other_held, 1000)
    h = t + timedelta(minutes=1)
    released = ledger.hold(held, 100, h, status="released", closed_at=h + timedelta(seconds=3))
    captured = ledger.hold(
        held, 200, h + MS, status="captured", closed_at=h + timedelta(seconds=4), captured=150
    )
    capture = ledger.post("hold_capture", captured.closed_at, held, ledger.settlement, 150)
    captured.capture_journal = capture
    captured.save(update_fields=["capture_journal"])
    active = ledger.hold(held, 40, h + 2 * MS)
    others = ledger.hold(other_held, 300, h + 3 * MS)
    # A hold placed at the instant another closed, and one whose close is recorded before its
    # placing (it never counted).
    ledger.hold(held, 40, released.closed_at, status="released", closed_at=released.closed_at + MS)
    ledger.hold(held, 40, released.closed_at + US, status="released", closed_at=released.closed_at)
    return SimpleNamespace(a=a, b=b, held=held, other_held=other_held, active=active, others=others)


def checked_after(books: SimpleNamespace) -> None:
    """At the latest migrations: every entry its running balance, every hold its steps, and the
    rules in place for what comes after."""
    a, b, active, others = books.a, books.b, books.active, books.others
    entries = list(Entry.objects.filter(account_id=a.pk).order_by("id"))
    assert [e.balance_after for e in entries] == [1000, 700, 650]
    assert [e.created_at for e in entries] == sorted(e.created_at for e in entries)
    assert entries[-1].created_at == entries[-2].created_at  # moved up to the previous one
    assert list(
        Entry.objects.filter(account_id=b.pk).order_by("id").values_list("balance_after", flat=True)
    ) == [300, 350]
    assert ledger_breaches() == []

    # The rule and the posting functions are in place after the migration.
    transfer_create(
        institution=fresh(a).institution,
        source=fresh(a),
        destination=fresh(b),
        amount=600,
        currency="EUR",
        actor=SYSTEM,
    )
    assert Entry.objects.filter(account_id=a.pk).latest("id").balance_after == 50
    assert ledger_breaches() == []

    # accounts/0023: the holds written before it have their steps.
    held = Account.objects.get(pk=books.held.pk)
    other_held = Account.objects.get(pk=books.other_held.pk)
    holds = list(Hold.objects.filter(account=held))
    instants = {hold.created_at for hold in holds} | {h.closed_at for h in holds if h.closed_at}
    for instant in sorted(instants):
        for at in (instant - US, instant, instant + US):
            assert balance_at(account=held, at=at)[1] == replay(held, at), at
    assert balance_at(account=held, at=timezone.now())[1] == 40 == fresh(held).pending
    assert balance_at(account=other_held, at=timezone.now())[1] == 300
    assert steps(other_held) == [(others.pk, 300, 300, others.created_at)]
    assert active.pk in {hold.pk for hold in holds}
    # The rule writes the steps of what comes after.
    later = place(held, 60)
    assert steps(held)[-1] == (later.pk, 60, 100, later.created_at)
