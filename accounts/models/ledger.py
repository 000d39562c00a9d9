"""Double-entry ledger: a journal is one money movement, its entries the legs.

Entries carry a positive `amount` and a `direction`; a credit adds to the account's balance, a
debit takes from it. PostgreSQL enforces the rules, not only Python (`accounts/sql/`): the
entries of a journal sum to zero per currency at commit (a deferred constraint trigger), and
entries and journals are append-only (UPDATE, DELETE and TRUNCATE are rejected by triggers).
Corrections are new journals (reversals), never edits.
"""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.ids import new_id
from core.money import money
from institutions.models import Institution

from .accounts import Account


def _journal_id():
    return new_id("jnl")


class Journal(models.Model):
    class Kind(models.TextChoices):
        ADJUSTMENT = "adjustment"
        TRANSFER = "transfer"
        TRANSFER_REVERSAL = "transfer_reversal"
        HOLD_CAPTURE = "hold_capture"
        CARD_RETURN = "card_return"
        FEE = "fee"
        FEE_WAIVER = "fee_waiver"
        DISPUTE = "dispute"  # a dispute's money step (disputes.models.DisputeStep)
        # Just-in-time funding: the program's funding account to a cardholder's account as the
        # program approves a payment, and back as the payment is released, reduced or refunded.
        PROGRAM_FUNDING = "program_funding"
        # A payment order's money: into a file, settled, returned (docs/payments.md).
        PAYMENT_ORDER = "payment_order"
        # Another bank's entry to or from a customer's account (docs/payments.md).
        INBOUND_ENTRY = "inbound_entry"
        # A card network's settlement of a day (docs/reconciliation.md, "Card settlement in").
        NETWORK_SETTLEMENT = "network_settlement"
        # A reconciliation break's resolution booking the bank's money: a bank-only credit to
        # suspense, a bank fee (docs/reconciliation.md, "Breaks").
        RECONCILIATION = "reconciliation"
        # A batch of a day's interest accruals booked (docs/interest.md, "Booked daily").
        INTEREST_ACCRUAL = "interest_accrual"
        # An account's interest of a period posted to it (docs/interest.md, "Posting").
        INTEREST_POSTING = "interest_posting"

    id = models.CharField(primary_key=True, max_length=40, default=_journal_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="journals")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    description = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The value date, when the money counts from an earlier instant than its posting (a
    # dispute's provisional credit, value-dated to the payment it disputes): null, it counts
    # from `created_at` (docs/balances-at-an-instant.md, "Value dates").
    value_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(value_at__isnull=True) | Q(value_at__lte=F("created_at")),
                name="journal_value_at_not_after_posting",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.id}"


class Entry(models.Model):
    class Direction(models.TextChoices):
        DEBIT = "debit"
        CREDIT = "credit"

    journal = models.ForeignKey(Journal, on_delete=models.PROTECT, related_name="entries")
    # No index of its own: entry_account_idx starts with it.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    direction = models.CharField(max_length=6, choices=Direction.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The account's posted balance right after this entry, written by the posting functions;
    # a database rule refuses any other value (accounts/sql/balance_after.sql).
    balance_after = models.BigIntegerField()

    class Meta:
        verbose_name = "ledger entry"
        verbose_name_plural = "ledger entries"
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="entry_amount_positive"),
            models.CheckConstraint(
                condition=Q(direction__in=["debit", "credit"]), name="entry_direction_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["account", "id"], name="entry_account_idx"),
            # The balance at an instant: the account's last entry at or before it.
            models.Index(fields=["account", "created_at", "id"], name="entry_account_at_idx"),
        ]

    def __str__(self):
        return f"{self.direction} {money(self.amount, self.currency)} {self.account_id}"

    @property
    def signed_amount(self) -> int:
        return self.amount if self.direction == self.Direction.CREDIT else -self.amount
