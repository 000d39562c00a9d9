"""What stops guessing: failed PAN resolutions per API key or staff user
(`PanResolutionFailure`) and PIN unblocks per card chain (`PinUnblock`). Both are counted over
a sliding window of time, so each row is one event with its time, and each table has the index
that count reads.

`PanResolutionFailure` rows are written after the refused request has been rolled back (the
404 or decline must not take its own record with it: `cards.services.pan_guard`); a key's or a
staff user's rows older than the window are deleted when its next failure is recorded, so the
table stays small.
`PinUnblock` rows are kept: they are the audit trail of who unblocked which PIN and why.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.models import actor_stamped
from institutions.models import ApiKey, Institution


class PanResolutionFailure(models.Model):
    """One PAN that matched no card: tried by an API key (none of its institution's cards holds
    it: an unknown PAN and another institution's PAN are the same failure), or typed by a staff
    user into the back office's search (none of the cards of the institutions they work on
    holds it; such a row has no institution: the search spans several). The PAN itself is not
    kept."""

    id = models.BigAutoField(primary_key=True)
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    staff_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,  # pan_failure_staff_time_idx starts with it
    )
    institution = models.ForeignKey(
        Institution, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "failed PAN lookup"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["api_key", "created_at"], name="pan_failure_key_time_idx"),
            models.Index(
                fields=["staff_user", "created_at"],
                condition=Q(staff_user__isnull=False),
                name="pan_failure_staff_time_idx",
            ),
        ]
        constraints = [
            # An API key's failure is its institution's; a staff user's belongs to none.
            models.CheckConstraint(
                name="pan_failure_one_subject",
                condition=Q(
                    api_key__isnull=False, institution__isnull=False, staff_user__isnull=True
                )
                | Q(api_key__isnull=True, institution__isnull=True, staff_user__isnull=False),
            ),
        ]

    def __str__(self):
        who = self.api_key_id or f"staff user {self.staff_user_id}"
        return f"{who} at {self.created_at:%Y-%m-%d %H:%M:%S}"


class PinUnblock(actor_stamped("unblocked_by")):
    """One unblock of a card's PIN, by an API key or a staff user (with the reason staff gave).

    `lineage` is the first card of the card's renewal/reissue/replacement chain: the PIN and its
    tries carry over to a successor, so the cap on unblocks counts per chain."""

    id = models.BigAutoField(primary_key=True)
    card = models.ForeignKey("cards.Card", on_delete=models.PROTECT, related_name="pin_unblocks")
    lineage = models.ForeignKey("cards.Card", on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "PIN unblock"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["lineage", "created_at"], name="pin_unblock_lineage_time_idx"),
        ]

    def __str__(self):
        return f"{self.card_id} at {self.created_at:%Y-%m-%d %H:%M:%S}"
