"""An account product's interest terms, effective-dated (docs/interest.md).

A product's terms are a list of rows, one an `effective_date` (unique per product and date):
the terms in effect on a day are the row with the latest `effective_date` on or before it. A
change never rewrites the past: it is a new row from a date not yet passed, and no row is ever
changed or deleted (a database rule, `interest/sql/terms_append_only.sql`).

Rates are percent per year as decimals (`Decimal`, never float): "2.5" is 2.5 % a year.
Balances (`minimum_balance`, a tier's `from_balance`) are minor units of the product's
currency.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import AccountProduct
from core.ids import new_id
from institutions.models import Institution

# Percent per year: at most 6 decimal places (a ten-thousandth of a basis point), |rate| <= 100.
RATE_DIGITS = 10
RATE_PLACES = 6


def _terms_id():
    return new_id("iterm")


class InterestTerms(models.Model):
    class Tiering(models.TextChoices):
        WHOLE = "whole"  # the whole balance at the rate of the tier it reaches
        BANDED = "banded"  # each band of the balance at its own tier's rate

    class DayCount(models.TextChoices):
        ACT_365F = "act_365f"
        ACT_360 = "act_360"
        ACT_ACT_ISDA = "act_act_isda"
        THIRTY_360 = "30_360"

    class BalanceMethod(models.TextChoices):
        DAILY = "daily"
        AVERAGE_DAILY = "average_daily"

    class PostingFrequency(models.TextChoices):
        MONTHLY = "monthly"
        QUARTERLY = "quarterly"
        YEARLY = "yearly"
        AT_CLOSE = "at_close"

    class Rounding(models.TextChoices):
        HALF_EVEN = "half_even"
        HALF_UP = "half_up"
        DOWN = "down"

    id = models.CharField(primary_key=True, max_length=40, default=_terms_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="interest_terms"
    )
    product = models.ForeignKey(
        AccountProduct, on_delete=models.PROTECT, related_name="interest_terms"
    )
    effective_date = models.DateField()
    # [{"from_balance": minor units, "rate": "2.5"}, ...]: the first from 0, increasing.
    deposit_tiers = models.JSONField()
    tiering = models.CharField(max_length=8, choices=Tiering.choices)
    minimum_balance = models.BigIntegerField(default=0)
    overdraft_rate = models.DecimalField(max_digits=RATE_DIGITS, decimal_places=RATE_PLACES)
    day_count = models.CharField(max_length=16, choices=DayCount.choices)
    balance_method = models.CharField(max_length=16, choices=BalanceMethod.choices)
    posting_frequency = models.CharField(max_length=16, choices=PostingFrequency.choices)
    rounding = models.CharField(max_length=16, choices=Rounding.choices)
    negative_rates_allowed = models.BooleanField(default=False)
    withholding_tax_rate = models.DecimalField(
        max_digits=RATE_DIGITS, decimal_places=RATE_PLACES, default=0
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["product", "effective_date"], name="interest_terms_one_a_date"
            ),
            models.CheckConstraint(
                condition=Q(minimum_balance__gte=0), name="interest_terms_minimum_nonneg"
            ),
            models.CheckConstraint(
                condition=Q(overdraft_rate__gte=0, overdraft_rate__lte=100),
                name="interest_terms_overdraft_rate_range",
            ),
            models.CheckConstraint(
                condition=Q(withholding_tax_rate__gte=0, withholding_tax_rate__lte=100),
                name="interest_terms_withholding_range",
            ),
        ]
        ordering = ["product_id", "effective_date"]

    def __str__(self):
        return f"Interest terms of {self.product_id} from {self.effective_date}"
