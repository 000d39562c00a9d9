"""The audit trail of every read of a card's full PAN and CVV (`sensitive-details`)."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.ids import new_id
from institutions.models import ApiKey, Institution


def _access_id():
    return new_id("cda")


class SensitiveDetailsAccess(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=_access_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    card = models.ForeignKey("cards.Card", on_delete=models.PROTECT, related_name="accesses")
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    request_id = models.CharField(max_length=64, blank=True)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    accessed_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        verbose_name = "sensitive-details access"
        verbose_name_plural = "sensitive-details accesses"
        indexes = [models.Index(fields=["card", "-id"], name="card_access_card_idx")]

    def __str__(self):
        return f"{self.card_id} at {self.accessed_at:%Y-%m-%d %H:%M:%S}"
