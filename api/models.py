"""What the HTTP layer stores: idempotency records, rate-limit counters and read-your-writes
marks."""

from django.db import models
from django.utils import timezone


class IdempotencyRecord(models.Model):
    """A write's key and its stored response. Committed with the write, or not at all."""

    # No index of its own: the unique (institution, key) begins with it and serves every
    # lookup by institution; one index entry less per write request (bench/README.md, "What
    # the WAL is").
    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.CASCADE, db_index=False
    )
    key = models.UUIDField()
    fingerprint = models.CharField(max_length=64)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(null=True)
    # The scopes the body added to the operation's (institutions.scopes.BodyScope), space
    # separated: a replay is the same request, so another key of the institution replaying it
    # must hold them too (api.idempotency.replay). A database default: the claim function
    # inserts records without naming it.
    body_scopes = models.CharField(max_length=200, blank=True, db_default="")
    # A request that answers only after its first transaction committed (a card authorization
    # its program decides, api.views `Continued`): the object that transaction created, until
    # the answer is stored; a retry meanwhile resumes from it (docs/api-contract.md).
    resource_id = models.CharField(max_length=40, blank=True, db_default="")
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


class ReplicaMark(models.Model):
    """Read-your-writes with read replicas (`api.replicas`): an API key's last write, as the
    primary's WAL position read right after it committed (`lsn`, bytes since 0/0). Until
    `expires_at` the key's GETs read only a replica that has replayed past it. One row per key,
    upserted by every write of the key; UNLOGGED (its migration): read on the primary only,
    never copied to a replica. Expired rows are purged by a periodic job."""

    key_id = models.CharField(primary_key=True, max_length=40)
    lsn = models.BigIntegerField()
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "api_replica_mark"

    def __str__(self):
        return f"{self.key_id} @ {self.lsn} until {self.expires_at}"
