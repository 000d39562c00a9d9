"""Fees (issue 15, docs/fees.md): what an account is charged under its products' fee schedules.

One row per fee, whatever became of it: `charged` (its own journal moved the amount from the
account to the institution's `fees` internal account), `waived` (staff reversed it: a second
journal, who and why kept here) or `declined` (the account could not pay it without going
below what its product allows: nothing moved, the reason kept). What caused it: the month
(`period`, YYYY-MM, monthly fees), the card authorization (ATM and foreign-transaction fees) or
the card (replacement fees). The unique constraints are the exactly-once guarantee: one monthly
fee per account and month, one fee of a kind per authorization, one replacement fee per card
replaced, whatever the number of workers or retries.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import new_id
from core.models import Timestamped
from core.money import money
from institutions.models import Institution

from .accounts import Account
from .ledger import Journal


def _fee_id():
    return new_id("fee")


class Fee(Timestamped):
    class Kind(models.TextChoices):
        MONTHLY = "monthly"
        ATM = "atm"
        REPLACEMENT = "replacement"
        FOREIGN_TRANSACTION = "foreign_transaction"

    class Status(models.TextChoices):
        CHARGED = "charged"
        WAIVED = "waived"
        DECLINED = "declined"

    id = models.CharField(primary_key=True, max_length=40, default=_fee_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="fees")
    # The card the fee is about: the card used (ATM, foreign), the card replaced (replacement).
    card = models.ForeignKey(
        "cards.Card", on_delete=models.PROTECT, null=True, blank=True, related_name="fees"
    )
    authorization = models.ForeignKey(
        "authorizations.Authorization",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="fees",
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    # The month a monthly fee is for, YYYY-MM in the institution's calendar; "" otherwise.
    period = models.CharField(max_length=7, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices)
    decline_reason = models.CharField(max_length=64, blank=True, default="")
    journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="fee"
    )
    waiver_journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="waived_fee"
    )
    waived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    waiver_reason = models.CharField(max_length=500, blank=True, default="")
    waived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="fee_amount_positive"),
            models.CheckConstraint(
                condition=Q(status__in=["charged", "waived", "declined"]), name="fee_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status="declined", journal__isnull=True)
                | (~Q(status="declined") & Q(journal__isnull=False)),
                name="fee_journal_iff_not_declined",
            ),
            models.CheckConstraint(
                condition=Q(status="waived", waiver_journal__isnull=False)
                | (~Q(status="waived") & Q(waiver_journal__isnull=True)),
                name="fee_waiver_journal_iff_waived",
            ),
            models.CheckConstraint(
                condition=~Q(kind="monthly") | Q(period__regex=r"^[0-9]{4}-[0-9]{2}$"),
                name="fee_monthly_has_period",
            ),
            # Exactly once: one monthly fee per account and month...
            models.UniqueConstraint(
                fields=["account", "period"],
                condition=Q(kind="monthly"),
                name="fee_monthly_once_per_period",
            ),
            # ... one fee of a kind per card authorization...
            models.UniqueConstraint(
                fields=["authorization", "kind"],
                condition=Q(authorization__isnull=False),
                name="fee_once_per_authorization",
            ),
            # ... and one replacement fee per card replaced.
            models.UniqueConstraint(
                fields=["card"],
                condition=Q(kind="replacement"),
                name="fee_replacement_once_per_card",
            ),
        ]
        indexes = [models.Index(fields=["account", "-id"], name="fee_account_idx")]

    def __str__(self):
        return f"{self.kind} fee {money(self.amount, self.currency)} {self.account_id}"
