"""The back office's own records: the sign-in lockouts of staff usernames (backoffice.lockouts)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class SignInLockout(models.Model):
    """One lockout of a staff username by django-axes: when it began, the address of the
    failure that tripped it, and the sign-ins refused while it lasted. Kept for good (axes'
    own attempt rows go when the lockout is lifted or cools off)."""

    # As typed at sign-in: a username nobody has is locked out (and recorded) too.
    username = models.CharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    last_refused_at = models.DateTimeField(default=timezone.now)
    refused_attempts = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "sign-in lockout"
        indexes = [models.Index(fields=["username", "-last_refused_at"], name="lockout_user_idx")]

    def __str__(self):
        return f"{self.username} locked out at {self.started_at:%Y-%m-%d %H:%M:%S}"
