"""Account products: the account types (financial contract types) an institution offers."""

from django.db import models
from django.utils import timezone

from core.ids import new_id
from institutions.models import Institution


def _product_id():
    return new_id("aprd")


class AccountProduct(models.Model):
    class Code(models.TextChoices):
        PREPAID = "AccountPrepaidAPI", "Prepaid account"
        CURRENT = "CBSFinancialContractTypeAPI", "Current account (core banking contract)"
        GHS_PREPAID = "GHSAccountPrepaidAPI", "Prepaid account in Ghana cedi"

    class Kind(models.TextChoices):
        PREPAID = "prepaid"
        CURRENT = "current"

    id = models.CharField(primary_key=True, max_length=40, default=_product_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="account_products"
    )
    code = models.CharField(max_length=64, choices=Code.choices)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    currency = models.CharField(max_length=3)
    allows_overdraft = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "code"], name="account_product_code_unique"
            )
        ]
        ordering = ["code"]

    def __str__(self):
        return f"{self.code} ({self.currency})"
