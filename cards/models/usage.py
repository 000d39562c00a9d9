"""What a card has spent: per calendar day in its institution's time zone (`CardSpend`, the
counters its daily, monthly and daily-cash limits are checked against, `cards.services.limits`)
and payment by payment (`CardPayment`, what velocity monitoring rules count over a window).
Both are keyed by the card's lineage (the first card of a renewal/replacement chain)."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.money import money


class CardSpend(models.Model):
    card = models.ForeignKey("cards.Card", on_delete=models.PROTECT, related_name="spend")
    day = models.DateField()
    spent = models.BigIntegerField(default=0)
    cash_spent = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["card", "day"], name="card_spend_card_day_unique"),
            models.CheckConstraint(
                condition=Q(spent__gte=0)
                & Q(cash_spent__gte=0)
                & Q(cash_spent__lte=models.F("spent")),
                name="card_spend_nonneg",
            ),
        ]

    def __str__(self):
        return f"{self.card_id} {self.day}: {self.spent}"


class CardPayment(models.Model):
    """One approved payment of a card: an authorization or a card transfer it sent."""

    id = models.BigAutoField(primary_key=True)
    card = models.ForeignKey("cards.Card", on_delete=models.PROTECT, related_name="payments")
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    cash = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["card", "created_at"], name="card_payment_card_time_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="card_payment_amount_positive")
        ]

    def __str__(self):
        return f"{self.card_id} {money(self.amount, self.currency)} at {self.created_at}"
