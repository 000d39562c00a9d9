"""What a card has spent per calendar day, in its institution's time zone: the counters its
daily, monthly and daily-cash limits are checked against (cards.limits)."""

from django.db import models
from django.db.models import Q


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
