"""Transfers between two accounts of one institution and currency, and their reversals.

A transfer is posted at once (one journal: debit source, credit destination), or, two-phase
(docs/two-phase-transfers.md), created `pending` with its amount held on the source (`hold`)
and later posted (all or part of it, one journal then), voided or expired. A reversal is a new
journal the other way; reversals may be partial and add up to at most the posted amount.
"""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account, Hold, Journal
from core.ids import new_id
from core.metadata import MetadataField
from core.models import (
    CreatedBy,
    Timestamped,
    api_key_unindexed,
    staff_user_index,
    staff_user_unindexed,
)
from core.money import money
from institutions.models import Institution


def _transfer_id():
    return new_id("tr")


def _reversal_id():
    return new_id("trr")


def _batch_id():
    return new_id("trb")


class TransferBatch(CreatedBy):
    """Many transfers in one request (docs/transfer-batches.md). `results` is the answer's list,
    one entry per item in request order; only batches that posted (or, independent, ran) are
    stored: a refused atomic batch leaves nothing."""

    class Mode(models.TextChoices):
        ATOMIC = "atomic"
        INDEPENDENT = "independent"

    id = models.CharField(primary_key=True, max_length=40, default=_batch_id, editable=False)
    # batch_institution_idx below starts with it (migrations/0010).
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    mode = models.CharField(max_length=16, choices=Mode.choices)
    results = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by_api_key = api_key_unindexed()
    created_by_user = staff_user_unindexed()

    class Meta:
        verbose_name_plural = "transfer batches"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="batch_institution_idx"),
            staff_user_index("created_by", "batch_created_by_user_idx"),
        ]

    def __str__(self):
        return f"{self.id} ({self.mode}, {len(self.results)} items)"


class Transfer(CreatedBy, Timestamped):
    class Status(models.TextChoices):
        POSTED = "posted"
        REVERSED = "reversed"
        # Two-phase (docs/two-phase-transfers.md): pending -> posted | voided | expired.
        PENDING = "pending"
        VOIDED = "voided"
        EXPIRED = "expired"

    id = models.CharField(primary_key=True, max_length=40, default=_transfer_id, editable=False)
    # No index of their own: the first column of transfer_institution_idx, transfer_source_idx
    # and transfer_destination_idx serves every lookup by them (fewer index entries to write).
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    source_account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    destination_account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # Set when the endpoint was named by `cardId` or `pan`: the card the money moved through.
    source_card = models.ForeignKey(
        "cards.Card",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    destination_card = models.ForeignKey(
        "cards.Card",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.POSTED)
    reversed_amount = models.BigIntegerField(default=0)
    # What moved: `amount` for a transfer posted at once, the amount a two-phase transfer was
    # posted for (at most `amount`), 0 while pending and when voided or expired.
    posted_amount = models.BigIntegerField(default=0)
    # Null until the money moves (a two-phase transfer that is pending, voided or expired).
    journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="transfer"
    )
    # Two-phase only: the hold of the amount on the source and when it ends by itself, and the
    # day a card source's limits counted the amount (given back there when voided or expired).
    # One transfer per hold (`transfer_hold_unique`, partial: a transfer posted at once, nearly
    # every one, has no hold and takes no entry there), so a foreign key, not a one-to-one
    # field, whose unique index would take one for each null too.
    hold = models.ForeignKey(
        Hold,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfer",
        db_index=False,
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    spend_day = models.DateField(null=True, blank=True)
    # The client's own id of the transfer, unique per institution for good (v2).
    reference = models.CharField(max_length=100, null=True, blank=True)
    batch = models.ForeignKey(
        TransferBatch,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfers",
        db_index=False,
    )
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by_api_key = api_key_unindexed()
    created_by_user = staff_user_unindexed()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "reference"],
                condition=Q(reference__isnull=False),
                name="transfer_reference_unique",
            ),
            models.UniqueConstraint(
                fields=["hold"], condition=Q(hold__isnull=False), name="transfer_hold_unique"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="transfer_amount_positive"),
            models.CheckConstraint(
                condition=Q(reversed_amount__gte=0) & Q(reversed_amount__lte=F("amount")),
                name="transfer_reversed_within_amount",
            ),
            models.CheckConstraint(
                condition=~Q(source_account=F("destination_account")),
                name="transfer_distinct_accounts",
            ),
            models.CheckConstraint(
                condition=Q(posted_amount__gte=0) & Q(posted_amount__lte=F("amount")),
                name="transfer_posted_within_amount",
            ),
            models.CheckConstraint(
                condition=Q(reversed_amount__lte=F("posted_amount")),
                name="transfer_reversed_within_posted",
            ),
            # Posted (or reversed): a journal and something posted. Two-phase and not posted
            # (pending, voided, expired): a hold, nothing posted, no journal.
            models.CheckConstraint(
                condition=Q(
                    status__in=["posted", "reversed"],
                    journal__isnull=False,
                    posted_amount__gt=0,
                )
                | Q(
                    status__in=["pending", "voided", "expired"],
                    journal__isnull=True,
                    posted_amount=0,
                    hold__isnull=False,
                    expires_at__isnull=False,
                ),
                name="transfer_state_consistent",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="transfer_institution_idx"),
            models.Index(fields=["source_account", "-id"], name="transfer_source_idx"),
            models.Index(fields=["destination_account", "-id"], name="transfer_destination_idx"),
            staff_user_index("created_by", "transfer_created_by_user_idx"),
        ]

    def __str__(self):
        return f"{self.id} {money(self.amount, self.currency)} ({self.status})"


class TransferReversal(CreatedBy):
    id = models.CharField(primary_key=True, max_length=40, default=_reversal_id, editable=False)
    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="reversals")
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, related_name="transfer_reversal"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by_api_key = api_key_unindexed()
    created_by_user = staff_user_unindexed()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="reversal_amount_positive"),
        ]
        indexes = [staff_user_index("created_by", "reversal_created_by_user_idx")]

    def __str__(self):
        return f"{self.id} of {self.transfer_id}: {money(self.amount, self.currency)}"
