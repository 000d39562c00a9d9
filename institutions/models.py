"""Tenants and their access: institutions, API keys, IP allowlists.

A financial institution (FI) is the tenant; everything else belongs to exactly one FI. API keys
are stored only as a SHA-256 hash of the secret plus a short public prefix used to find the row
(the secret has 256 bits of entropy, so a fast hash is enough and a slow one would only cost
latency on every request).

The tables keep the names they had when these models lived in `api` (institutions/migrations/0001
moved the models without touching a row).
"""

import ipaddress

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from core.ids import new_id
from institutions import scopes

ISO_WEEKDAYS = range(1, 8)


def default_weekend_days():
    return [6, 7]  # Saturday and Sunday


def _institution_id():
    return new_id("fi")


def _api_key_id():
    return new_id("key")


class Institution(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=_institution_id, editable=False)
    name = models.CharField(max_length=200, unique=True)
    # Default currency of new accounts (ISO 4217 alpha-3).
    currency = models.CharField(max_length=3, default="EUR")
    # IANA zone whose calendar days and months card limits count in (cards.usage).
    time_zone = models.CharField(max_length=64, default="UTC")
    # ISO weekday numbers (1 Monday .. 7 Sunday) that are no business day (institutions.calendar).
    weekend_days = ArrayField(
        models.PositiveSmallIntegerField(), default=default_weekend_days, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        db_table = "api_institution"
        ordering = ["name"]
        constraints = [
            # Each an ISO weekday, and at least one business day a week (else no deadline
            # could ever fall).
            models.CheckConstraint(
                condition=models.Q(weekend_days__contained_by=list(ISO_WEEKDAYS))
                & models.Q(weekend_days__len__lt=len(ISO_WEEKDAYS)),
                name="institution_weekend_days_valid",
            )
        ]

    def __str__(self):
        return self.name


class ApiKey(models.Model):
    SCOPES = scopes.ALL

    id = models.CharField(primary_key=True, max_length=40, default=_api_key_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="api_keys")
    name = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    scopes = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_by = models.CharField(max_length=200, blank=True, editable=False)
    replaced_by = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replaces",
        editable=False,
    )
    created_by = models.CharField(max_length=200, blank=True, editable=False)

    class Meta:
        db_table = "api_apikey"
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.institution})"

    def is_usable(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"


class AllowedNetwork(models.Model):
    """A CIDR range (IPv4 or IPv6) a key may be used from; a key with none is usable nowhere."""

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="allowed_networks")
    cidr = models.CharField(max_length=64, help_text="e.g. 203.0.113.0/24 or 2001:db8::/48")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        db_table = "api_allowednetwork"
        constraints = [
            models.UniqueConstraint(fields=["api_key", "cidr"], name="allowed_network_unique")
        ]
        ordering = ["cidr"]

    def __str__(self):
        return self.cidr

    def network(self):
        return ipaddress.ip_network(self.cidr, strict=False)


class InstitutionAccess(models.Model):
    """An institution a staff user may work on in the back office (docs/back-office.md).

    A staff user's rows are the whole of what they see and act on there. A staff user with no
    row sees no institution's rows, unless granted the permission `work_on_all_institutions`
    (or a superuser): working on every institution is granted explicitly, never by omission.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="institution_access"
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.CASCADE, related_name="staff_access"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "institution access"
        verbose_name_plural = "institution access"
        ordering = ["user", "institution"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "institution"], name="institution_access_unique"
            )
        ]
        permissions = [
            (
                "work_on_all_institutions",
                "Can work on every institution's rows in the back office",
            )
        ]

    def __str__(self):
        return f"{self.user} → {self.institution}"


class Holiday(models.Model):
    """A day an institution does no business although it is no weekend day (a public holiday,
    a bank holiday): not counted by `institutions.calendar`. One per institution and date."""

    institution = models.ForeignKey(Institution, on_delete=models.CASCADE, related_name="holidays")
    date = models.DateField()
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["institution", "date"]
        constraints = [
            models.UniqueConstraint(fields=["institution", "date"], name="holiday_unique_date")
        ]

    def __str__(self):
        return f"{self.date.isoformat()} {self.name}"
