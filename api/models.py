"""Tenants and their access: institutions, API keys, IP allowlists, idempotency records.

A financial institution (FI) is the tenant; everything else belongs to exactly one FI. API keys
are stored only as a SHA-256 hash of the secret plus a short public prefix used to find the row
(the secret has 256 bits of entropy, so a fast hash is enough and a slow one would only cost
latency on every request).
"""

import ipaddress

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from . import scopes
from .ids import new_id


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
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]

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
        constraints = [
            models.UniqueConstraint(fields=["api_key", "cidr"], name="allowed_network_unique")
        ]
        ordering = ["cidr"]

    def __str__(self):
        return self.cidr

    def network(self):
        return ipaddress.ip_network(self.cidr, strict=False)


class IdempotencyRecord(models.Model):
    """A write's key and its stored response. Committed with the write, or not at all."""

    institution = models.ForeignKey(Institution, on_delete=models.CASCADE)
    key = models.UUIDField()
    fingerprint = models.CharField(max_length=64)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(null=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["institution", "key"], name="idempotency_key_unique")
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created_idx")]

    def __str__(self):
        return f"{self.method} {self.path} ({self.key})"


class RateCounter(models.Model):
    """Requests counted in one fixed window for one bucket (`api.ratelimit`): `key:<id>`,
    `institution:<id>`, `refused:<address>`, `schema:<address>`. The table is UNLOGGED (its
    migration): counters are disposable, and old windows are purged by a periodic job."""

    pk = models.CompositePrimaryKey("bucket", "window_start")
    bucket = models.CharField(max_length=120)
    # Unix time (seconds) at which the window starts: a multiple of its length.
    window_start = models.BigIntegerField()
    count = models.IntegerField()

    class Meta:
        db_table = "api_rate_counter"

    def __str__(self):
        return f"{self.bucket} @ {self.window_start}: {self.count}"
