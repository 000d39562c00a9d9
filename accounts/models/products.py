"""Account products: the account types (financial contract types) an institution offers.

A product's identity is its `id` (the API's `rid`), not its `code`: the code is one of the
three financial contract types of the spec (2.4), and a bank may offer several products of one
type (a EUR and a USD current account, or two EUR current accounts with different overdraft
caps). Every institution starts with the three seeded ones (`account_products_seed`); the bank
adds and changes its own through `account_product_create` / `account_product_update`
(docs/products.md). The code and the currency never change after creation; a `retired` product
opens no new account, and the accounts already on it go on as before.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import new_id
from core.models import Timestamped
from institutions.models import Institution


def _product_id():
    return new_id("aprd")


class AccountProduct(Timestamped):
    class Code(models.TextChoices):
        PREPAID = "AccountPrepaidAPI", "Prepaid account"
        CURRENT = "CBSFinancialContractTypeAPI", "Current account (core banking contract)"
        GHS_PREPAID = "GHSAccountPrepaidAPI", "Prepaid account in Ghana cedi"

    class Kind(models.TextChoices):
        PREPAID = "prepaid"
        CURRENT = "current"

    class Status(models.TextChoices):
        ACTIVE = "active"
        RETIRED = "retired"

    # The kind of account each financial contract type is.
    KIND_OF_CODE = {
        Code.PREPAID: Kind.PREPAID,
        Code.CURRENT: Kind.CURRENT,
        Code.GHS_PREPAID: Kind.PREPAID,
    }

    id = models.CharField(primary_key=True, max_length=40, default=_product_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="account_products"
    )
    code = models.CharField(max_length=64, choices=Code.choices)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    currency = models.CharField(max_length=3)
    allows_overdraft = models.BooleanField(default=False)
    # The most an account of the product may be given as its own overdraft limit (minor units
    # of `currency`); 0 unless the product allows overdraft.
    max_overdraft_limit = models.BigIntegerField(default=0)
    # Fee schedule (docs/fees.md): charged to each active account of the product for every
    # month, minor units of `currency`; 0 charges nothing.
    monthly_fee = models.BigIntegerField(default=0)
    # How many banking days the money of a debit another bank paid (an ACH collection) stays
    # held for its return window (docs/payments.md, "Money"); None: the ACH profile's.
    debit_hold_days = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(max_overdraft_limit__gte=0),
                name="account_product_max_overdraft_nonneg",
            ),
            models.CheckConstraint(
                condition=Q(allows_overdraft=True) | Q(max_overdraft_limit=0),
                name="account_product_overdraft_cap_needs_overdraft",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["active", "retired"]), name="account_product_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(monthly_fee__gte=0), name="account_product_monthly_fee_nonneg"
            ),
            models.CheckConstraint(
                condition=Q(debit_hold_days__lte=60), name="account_product_debit_hold_days"
            ),
        ]
        ordering = ["code", "id"]

    def __str__(self):
        return f"{self.name} ({self.code}, {self.currency})"

    @property
    def is_retired(self) -> bool:
        return self.status == self.Status.RETIRED
