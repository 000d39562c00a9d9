"""Card products: what an institution issues (debit on current accounts, prepaid on prepaid
accounts), from which BIN, in which forms, for how long, with which default limits and default
security settings.

Every institution starts with the standard products (`card_products_seed`); the bank adds and
changes its own (`card_product_create` / `card_product_update`, docs/products.md). A product's
defaults are copied onto each card when it is issued: changing them changes the cards issued
afterwards only. A `retired` product issues no new card; the cards already on it go on (and are
renewed, reissued and replaced as before). The BIN is unique among the institution's card
products (a database constraint).
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import new_id
from core.models import Timestamped
from institutions.models import Institution


def _card_product_id():
    return new_id("cprd")


class CardProduct(Timestamped):
    class Kind(models.TextChoices):
        DEBIT = "debit"
        PREPAID = "prepaid"

    class Form(models.TextChoices):
        PHYSICAL = "physical"
        VIRTUAL = "virtual"

    class Status(models.TextChoices):
        ACTIVE = "active"
        RETIRED = "retired"

    class DisputePolicy(models.TextChoices):
        # Whose clocks its cards' disputes run on (docs/disputes.md, "Deadlines").
        REG_E = "regE", "Regulation E (US)"
        PSD2 = "psd2", "PSD2 (EU)"
        NONE = "none", "None: the network's filing limit only"

    class ProvisionalCredit(models.TextChoices):
        # When its cards' disputes credit the cardholder (docs/disputes.md, "Money").
        AT_SUBMISSION = "at_submission", "At submission"
        BY_DEADLINE = "by_deadline", "By the policy's deadline, unless resolved before"

    # card kind -> the account product kind its cards sit on
    ACCOUNT_KIND = {Kind.DEBIT: "current", Kind.PREPAID: "prepaid"}

    id = models.CharField(primary_key=True, max_length=40, default=_card_product_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="card_products"
    )
    code = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    forms = ArrayField(models.CharField(max_length=16, choices=Form.choices))
    # Bank identification number: the first 6 or 8 digits of every PAN of the product.
    bin = models.CharField(max_length=8)
    pan_length = models.PositiveSmallIntegerField(default=16)
    # How long a new card is valid: it expires at the end of the month this many months after
    # the month of issue (renewals and replacements too).
    validity_months = models.PositiveSmallIntegerField(default=36)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Default limits of new cards, in minor units of the card's account currency.
    default_per_transaction = models.BigIntegerField()
    default_daily = models.BigIntegerField()
    default_monthly = models.BigIntegerField()
    default_daily_cash = models.BigIntegerField()
    # Default security settings of new cards (`Card.ecommerce` ... `Card.blocked_countries`).
    default_ecommerce = models.BooleanField(default=True)
    default_contactless = models.BooleanField(default=True)
    default_atm = models.BooleanField(default=True)
    default_international = models.BooleanField(default=True)
    default_magstripe = models.BooleanField(default=False)
    default_blocked_mccs = ArrayField(models.CharField(max_length=4), default=list, blank=True)
    default_blocked_countries = ArrayField(models.CharField(max_length=3), default=list, blank=True)
    # Fee schedule (docs/fees.md), minor units of the card's account currency: per ATM (`Cash`)
    # authorization presented, per replacement; and basis points of a payment whose merchant
    # country is not the cardholder's. 0 charges nothing.
    atm_fee = models.BigIntegerField(default=0)
    replacement_fee = models.BigIntegerField(default=0)
    foreign_transaction_fee_bps = models.IntegerField(default=0)
    dispute_policy = models.CharField(
        max_length=8,
        choices=DisputePolicy.choices,
        default=DisputePolicy.NONE,
        db_default=DisputePolicy.NONE,
    )
    dispute_provisional_credit = models.CharField(
        max_length=16,
        choices=ProvisionalCredit.choices,
        default=ProvisionalCredit.AT_SUBMISSION,
        db_default=ProvisionalCredit.AT_SUBMISSION,
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "code"], name="card_product_code_unique"
            ),
            models.UniqueConstraint(fields=["institution", "bin"], name="card_product_bin_unique"),
            models.CheckConstraint(
                condition=Q(bin__regex=r"^[0-9]{6}([0-9]{2})?$"), name="card_product_bin_digits"
            ),
            models.CheckConstraint(
                condition=Q(pan_length__gte=13, pan_length__lte=19),
                name="card_product_pan_length",
            ),
            models.CheckConstraint(
                condition=Q(validity_months__gte=1, validity_months__lte=120),
                name="card_product_validity_months",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["active", "retired"]), name="card_product_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(
                    default_per_transaction__gte=0,
                    default_daily__gte=0,
                    default_monthly__gte=0,
                    default_daily_cash__gte=0,
                ),
                name="card_product_default_limits_nonneg",
            ),
            models.CheckConstraint(condition=Q(forms__len__gte=1), name="card_product_has_a_form"),
            models.CheckConstraint(
                condition=Q(
                    atm_fee__gte=0,
                    replacement_fee__gte=0,
                    foreign_transaction_fee_bps__gte=0,
                    foreign_transaction_fee_bps__lte=10000,
                ),
                name="card_product_fees_valid",
            ),
            models.CheckConstraint(
                condition=Q(dispute_policy__in=["regE", "psd2", "none"]),
                name="card_product_dispute_policy_valid",
            ),
            models.CheckConstraint(
                condition=Q(dispute_provisional_credit__in=["at_submission", "by_deadline"]),
                name="card_product_dispute_provisional_credit_valid",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.kind}, BIN {self.bin})"

    @property
    def account_kind(self) -> str:
        return self.ACCOUNT_KIND[self.kind]

    @property
    def validity_years(self) -> int:
        """Whole years of `validity_months`, rounded down (the API's older `validityYears`)."""
        return self.validity_months // 12

    @property
    def is_retired(self) -> bool:
        return self.status == self.Status.RETIRED
