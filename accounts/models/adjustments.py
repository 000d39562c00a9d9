"""Adjustments: loads (credit) and unloads (debit) of an account against the institution's
funding account."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import new_id
from core.models import CreatedBy
from core.money import money
from institutions.models import Institution

from .accounts import Account
from .ledger import Journal


def _adjustment_id():
    return new_id("adj")


class Adjustment(CreatedBy):
    class Direction(models.TextChoices):
        CREDIT = "credit"
        DEBIT = "debit"

    id = models.CharField(primary_key=True, max_length=40, default=_adjustment_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="adjustments")
    direction = models.CharField(max_length=6, choices=Direction.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=500, blank=True)
    journal = models.OneToOneField(Journal, on_delete=models.PROTECT, related_name="adjustment")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="adjustment_amount_positive"),
        ]

    def __str__(self):
        return f"{self.direction} {money(self.amount, self.currency)} {self.account_id}"
