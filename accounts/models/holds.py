"""Holds: a pending debit that reduces an account's available balance until it is captured
(money moves), released, or expires. `active -> captured | released | expired`."""

from datetime import timedelta

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.ids import new_id
from core.metadata import MetadataField
from core.models import Timestamped, actor_stamped, staff_user_index, staff_user_unindexed
from core.money import money
from institutions.models import Institution

from .accounts import Account
from .ledger import Journal


def _hold_id():
    return new_id("hold")


# How long a hold placed through the API may last, and lasts when not told (holds and
# two-phase transfers).
DEFAULT_LIFETIME = timedelta(days=7)
MAX_LIFETIME = timedelta(days=30)


class Hold(actor_stamped("placed_by"), Timestamped):
    class Status(models.TextChoices):
        ACTIVE = "active"
        CAPTURED = "captured"
        RELEASED = "released"
        EXPIRED = "expired"

    class Purpose(models.TextChoices):
        HOLD = "hold", "Placed through /holds"
        CARD_AUTHORIZATION = "card_authorization", "A card authorization's hold"
        TRANSFER = "transfer", "A two-phase transfer's hold"
        # Payment orders (docs/payments.md): a credit's money until its file takes it, and a
        # collected debit's money for its return window.
        PAYMENT_ORDER = "payment_order", "A payment order's money, until its file"
        PAYMENT_RETURNS = "payment_returns", "A collected debit's money, for its returns"

    id = models.CharField(primary_key=True, max_length=40, default=_hold_id, editable=False)
    # No index of their own: hold_institution_idx and hold_account_idx start with them.
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="holds", db_index=False
    )
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="holds", db_index=False
    )
    # A card authorization's hold has no staff user: indexed only where set.
    placed_by_user = staff_user_unindexed()
    amount = models.BigIntegerField()
    captured_amount = models.BigIntegerField(default=0)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # A card authorization's hold is captured by its presentment, which may be higher than
    # authorized (authorizations.services.clearing), and expires with its authorization.
    purpose = models.CharField(max_length=32, choices=Purpose.choices, default=Purpose.HOLD)
    reason = models.CharField(max_length=500, blank=True)
    expires_at = models.DateTimeField()
    capture_journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="captured_hold"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)
    closed_at = models.DateTimeField(null=True, blank=True)
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="hold_amount_positive"),
            models.CheckConstraint(
                condition=Q(captured_amount__gte=0)
                & (Q(captured_amount__lte=F("amount")) | Q(purpose="card_authorization")),
                name="hold_captured_within_amount",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="hold_institution_idx"),
            models.Index(fields=["account", "-id"], name="hold_account_idx"),
            models.Index(
                fields=["expires_at"], condition=Q(status="active"), name="hold_active_expiry_idx"
            ),
            # GET /card-authorizations?status=: an authorization's status is its hold's, and a
            # rare one (pending or expired among years of presented ones) is found here, not by
            # walking the institution's whole history (authorizations.selectors).
            models.Index(
                fields=["institution", "status"],
                condition=Q(purpose="card_authorization"),
                name="hold_card_auth_status_idx",
            ),
            staff_user_index("placed_by", "hold_placed_by_user_idx"),
        ]

    def __str__(self):
        return f"{self.id} {money(self.amount, self.currency)} ({self.status})"


class HoldChange(models.Model):
    """A step of an account's pending balance: a hold placed (`amount` > 0, at its `created_at`)
    or closed (captured, released or expired: `-amount`, at its `closed_at`), and the account's
    pending balance after it. Written only by the database (accounts/sql/hold_changes.sql, a
    trigger on holds), in the account's lock order; `at` never goes back in id order per account,
    so the pending balance at an instant is the `pending_after` of the account's last change at
    or before it: one index lookup (`accounts.selectors.balance_at`,
    docs/balances-at-an-instant.md)."""

    id = models.BigAutoField(primary_key=True)
    # The index below leads with the account; nothing deletes accounts or holds, so neither
    # foreign key needs an index of its own.
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+", db_index=False)
    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="+", db_index=False)
    at = models.DateTimeField()
    amount = models.BigIntegerField()
    pending_after = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["account", "at", "id"], name="holdchange_account_at_idx"),
        ]

    def __str__(self):
        return f"{self.hold_id} {self.amount:+d} at {self.at.isoformat()}"
