"""An account product's interest terms, effective-dated (docs/interest.md).

A product's terms are a list of rows, one an `effective_date` (unique per product and date):
the terms in effect on a day are the row with the latest `effective_date` on or before it. A
change never rewrites the past: it is a new row from a date not yet passed, and no row is ever
changed or deleted (a database rule, `interest/sql/terms_append_only.sql`).

An account's override is a row of the same model with the `account` instead of the `product`
and an optional `end_date` (docs/interest.md, "Overrides"): the same fields, checked by the same
code, kept by the same rule; `interest.terms.terms_in_effect` picks a day's terms.

Rates are percent per year as decimals (`Decimal`, never float): "2.5" is 2.5 % a year.
Balances (`minimum_balance`, a tier's `from_balance`) are minor units of the product's
currency.
"""

from django.db import models
from django.db.models import F, Q
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
    # A product's terms; null: an account's override (`account` set instead).
    product = models.ForeignKey(
        AccountProduct,
        on_delete=models.PROTECT,
        related_name="interest_terms",
        null=True,
        blank=True,
    )
    # An account's override of its product's terms; null: a product's terms. No index of its
    # own: interest_override_one_a_date starts with it.
    account = models.ForeignKey(
        "accounts.Account",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        db_index=False,
    )
    effective_date = models.DateField()
    # An override's last day (inclusive); null: until the next override. A product's: null.
    end_date = models.DateField(null=True, blank=True)
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
            models.UniqueConstraint(
                fields=["account", "effective_date"], name="interest_override_one_a_date"
            ),
            # A product's terms (no end) or an account's override, never both.
            models.CheckConstraint(
                condition=Q(product__isnull=False, account__isnull=True, end_date__isnull=True)
                | Q(product__isnull=True, account__isnull=False),
                name="interest_terms_product_or_account",
            ),
            models.CheckConstraint(
                condition=Q(end_date__isnull=True) | Q(end_date__gt=F("effective_date")),
                name="interest_terms_end_after_start",
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
        verbose_name = "interest terms"
        verbose_name_plural = "interest terms"

    def __str__(self):
        if self.account_id:
            return f"Interest override of {self.account_id} from {self.effective_date}"
        return f"Interest terms of {self.product_id} from {self.effective_date}"


# The exact accruals kept in the database: this many places of a minor unit (docs/interest.md,
# "Accruals"), and digits for a day's interest of the largest balance and the running totals.
ACCRUAL_DIGITS = 38
ACCRUAL_PLACES = 12  # calculation.PLACES


def _booking_id():
    return new_id("ibook")


class AccrualKind(models.TextChoices):
    DEPOSIT = "deposit"  # owed to the customer (negative under a negative rate)
    OVERDRAFT = "overdraft"  # owed by the customer


class AccrualBook(models.Model):
    """An institution's interest books in a currency: the days accrued so far and the running
    totals, exact and booked (docs/interest.md, "Booked daily"). Its row is locked by each
    batch of the accrual job (`interest.locks.lock_book`): the batches of one institution and
    currency book one after another."""

    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="interest_books"
    )
    currency = models.CharField(max_length=3)
    # The last day every account of the books was accrued for; null: none yet.
    accrued_through = models.DateField(null=True, blank=True)
    deposit_accrued = models.DecimalField(
        max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES, default=0
    )
    deposit_booked = models.BigIntegerField(default=0)
    overdraft_accrued = models.DecimalField(
        max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES, default=0
    )
    overdraft_booked = models.BigIntegerField(default=0)
    # The posting job has posted every period ending on or before it (docs/interest.md,
    # "Posting"); null: none yet.
    posted_through = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)
    # The watermark of back-valued money (interest.adjustments): the accounts' entries posted up
    # to this instant have been looked at; null: none yet (from `updated_at`, the last batch).
    adjusted_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "currency"], name="interest_book_one_a_currency"
            ),
        ]

    def __str__(self):
        return f"Interest books of {self.institution_id} in {self.currency}"


class InterestBooking(models.Model):
    """One batch of a day's accruals booked: what they add to the books' running totals, and
    the journal of the minor units that moves (none when the rounded totals did not move)."""

    id = models.CharField(primary_key=True, max_length=40, default=_booking_id, editable=False)
    # No index of its own: ibook_day_idx starts with it.
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    currency = models.CharField(max_length=3)
    day = models.DateField()
    journal = models.OneToOneField(
        "accounts.Journal",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="interest_booking",
    )
    deposit_accrued = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    deposit_amount = models.BigIntegerField()
    overdraft_accrued = models.DecimalField(
        max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES
    )
    overdraft_amount = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        indexes = [models.Index(fields=["institution", "currency", "day"], name="ibook_day_idx")]

    def __str__(self):
        return f"Interest booked {self.day} ({self.pk})"


class InterestAccrual(models.Model):
    """One account's exact interest of one day and kind: a row per account, day and kind (a
    database rule); a day with no interest writes none."""

    # No index of their own (a row a day per account: each index costs): nothing looks the
    # rows up by institution or terms but verify_ledger, which reads them all; terms are never
    # deleted (a database rule).
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # No index of its own: the unique constraint starts with it.
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    day = models.DateField()
    kind = models.CharField(max_length=16, choices=AccrualKind.choices)
    balance = models.BigIntegerField()  # the end-of-day balance by value date
    # The balance's parts and their rates: [{"amount": minor units, "rate": "3.65"}, ...].
    bands = models.JSONField()
    terms = models.ForeignKey(
        InterestTerms, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    fraction = models.CharField(max_length=16)  # the day's share of a year, "1/365"
    accrual = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    booking = models.ForeignKey(InterestBooking, on_delete=models.PROTECT, related_name="accruals")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "day", "kind"], name="interest_accrual_one_a_day"
            ),
        ]

    def __str__(self):
        return f"Interest {self.kind} of {self.account_id} on {self.day}"


class InterestAdjustment(models.Model):
    """The difference money booked later with an earlier value date made to one account's
    interest of a day already accrued (docs/interest.md, "Back-valued money"): the day's
    interest recomputed from its balances as they stand now, less its accrual row and earlier
    adjustments. Found and booked on `found_on` (a day of the current period, the last day
    accrued when found); the accrual row itself is never changed."""

    # No index of its own: nothing looks the rows up by institution but verify_ledger.
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # No index of its own: the two indexes below start with it.
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    day = models.DateField()  # the day it adjusts
    kind = models.CharField(max_length=16, choices=AccrualKind.choices)
    balance = models.BigIntegerField()  # the day's end-of-day balance by value date, now
    # The day's interest of the kind now less what was accrued and adjusted before: minor
    # units to 12 places, exactly (the rows are to 12 places).
    difference = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    found_on = models.DateField()
    booking = models.ForeignKey(
        InterestBooking, on_delete=models.PROTECT, related_name="adjustments"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        indexes = [
            # The day's earlier adjustments when it is recomputed.
            models.Index(fields=["account", "day"], name="iadjust_day_idx"),
            # An account's adjustments found in a period, for its posting (adjustments_in).
            models.Index(fields=["account", "found_on"], name="iadjust_found_idx"),
        ]

    def __str__(self):
        return f"Interest {self.kind} adjustment of {self.account_id} on {self.day}"


def _posting_id():
    return new_id("ipost")


class InterestPosting(models.Model):
    """One account's interest of one kind posted for one period (docs/interest.md, "Posting"):
    a row per account, period and kind (a database rule: one per account, kind and last day),
    written when the period had accruals of the kind. `accrued` (the period's exact sum,
    `interest.selectors.period_accruals`) plus `carried_in` (the last posting's `carried_out`
    of the account and kind) is `amount` (whole minor units, rounded by the terms' `rounding`)
    plus `carried_out`, the residue the next period carries. A period's kinds share one journal
    (none when nothing moved)."""

    class Trigger(models.TextChoices):
        PERIOD_END = "period_end"  # the posting job, once the period's last day was accrued
        SETTLEMENT = "settlement"  # the settlement before a close, up to yesterday

    id = models.CharField(primary_key=True, max_length=40, default=_posting_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # No index of its own: the unique constraint starts with it.
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=16, choices=AccrualKind.choices)
    first_day = models.DateField()
    last_day = models.DateField()
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    # The terms in effect on the last day: their rounding and withholding tax applied.
    terms = models.ForeignKey(
        InterestTerms, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    accrued = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    carried_in = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    amount = models.BigIntegerField()  # posted, gross of the tax withheld
    carried_out = models.DecimalField(max_digits=ACCRUAL_DIGITS, decimal_places=ACCRUAL_PLACES)
    withholding_tax = models.BigIntegerField(default=0)  # of `amount`, deposit interest only
    journal = models.ForeignKey(
        "accounts.Journal",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="interest_postings",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "kind", "last_day"], name="interest_posting_one_a_period"
            ),
            models.CheckConstraint(
                condition=Q(first_day__lte=models.F("last_day")),
                name="interest_posting_days_in_order",
            ),
            models.CheckConstraint(
                condition=Q(withholding_tax__gte=0), name="interest_posting_tax_nonneg"
            ),
        ]

    def __str__(self):
        return f"Interest {self.kind} of {self.account_id} posted for {self.last_day}"
