"""Card products: what an institution issues (debit on current accounts, prepaid on prepaid
accounts), from which BIN, in which forms, for how long, with which default limits."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import new_id
from institutions.models import Institution


def _card_product_id():
    return new_id("cprd")


class CardProduct(models.Model):
    class Kind(models.TextChoices):
        DEBIT = "debit"
        PREPAID = "prepaid"

    class Form(models.TextChoices):
        PHYSICAL = "physical"
        VIRTUAL = "virtual"

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
    validity_years = models.PositiveSmallIntegerField(default=3)
    # Default limits of new cards, in minor units of the card's account currency.
    default_per_transaction = models.BigIntegerField()
    default_daily = models.BigIntegerField()
    default_monthly = models.BigIntegerField()
    default_daily_cash = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "code"], name="card_product_code_unique"
            ),
            models.CheckConstraint(
                condition=Q(bin__regex=r"^[0-9]{6}([0-9]{2})?$"), name="card_product_bin_digits"
            ),
            models.CheckConstraint(
                condition=Q(pan_length__gte=13, pan_length__lte=19),
                name="card_product_pan_length",
            ),
            models.CheckConstraint(
                condition=Q(validity_years__gte=1, validity_years__lte=10),
                name="card_product_validity_years",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.kind}, BIN {self.bin})"

    @property
    def account_kind(self) -> str:
        return self.ACCOUNT_KIND[self.kind]
