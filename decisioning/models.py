"""A decisioning endpoint: where the program (the bank's or fintech's own system) decides card
authorizations in real time (docs/design.md section 13; issue 31; docs/decisioning.md).

One per institution (its default) and at most one per card product (it wins for that product's
cards): both rules are unique indexes, so two concurrent creations cannot both succeed. Each
endpoint has a URL (the outbound target rules of webhooks, `core.outbound.targets`), a timeout
in milliseconds (100..3000, a CHECK), what to do when the program fails to answer
(`on_failure`), whether its answers are obeyed (`live`) or only recorded (`shadow`), and
whether it is `enabled`. The program signs its answer as TX signs its request (Standard
Webhooks, bound to the request's message id); `accept_unsigned_answers`, off by default, lets
a program answer unsigned.

The signing secret (Standard Webhooks, `whsec_` + base64) is encrypted at rest (`core.crypto`,
AES-GCM, the associated data binding each ciphertext to its column and endpoint), shown once on
creation and on rotation. After a rotation the previous secret keeps signing too (a second
`v1,` signature in the same header) until `previous_secret_expires_at`: the program can switch
its verification key without a moment where TX's requests fail it. Both columns are empty or
both set (a CHECK).
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core import crypto
from core.ids import new_id
from core.models import CreatedBy, Timestamped, actor_stamped
from core.outbound.targets import MAX_URL_LENGTH
from institutions.models import Institution

MIN_TIMEOUT_MS = 100
MAX_TIMEOUT_MS = 3000

UpdatedBy = actor_stamped("updated_by")


def _endpoint_id():
    return new_id("dce")


class DecisioningEndpoint(Timestamped, CreatedBy, UpdatedBy):
    class OnFailure(models.TextChoices):
        DECLINE = "decline"
        APPROVE = "approve"
        # TX's own ledger and controls decide, as if there were no endpoint.
        STANDIN = "standin"

    class Mode(models.TextChoices):
        LIVE = "live"
        # Called and recorded, not obeyed: TX decides.
        SHADOW = "shadow"
        # Live, and the program funds what it approves (just-in-time funding): asked before
        # TX's funds check, its approval moves the money from its funding account to the
        # cardholder's (docs/decisioning.md, "Just-in-time funding").
        JIT = "jit"

    id = models.CharField(primary_key=True, max_length=40, default=_endpoint_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="decisioning_endpoints"
    )
    # None: the institution's endpoint, for every card without an endpoint of its product.
    card_product = models.ForeignKey(
        "cards.CardProduct",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="decisioning_endpoints",
    )
    url = models.CharField(max_length=MAX_URL_LENGTH)
    timeout_ms = models.PositiveIntegerField()
    on_failure = models.CharField(max_length=16, choices=OnFailure.choices)
    mode = models.CharField(max_length=16, choices=Mode.choices)
    enabled = models.BooleanField(default=True)
    # Whether an answer that carries no signature (no `webhook-signature`) is taken. Off by
    # default: an unsigned answer is a failure that `on_failure` decides, because anyone who
    # can answer in the program's place (a misrouted host, a proxy) would otherwise decide
    # payments. On, it still never takes a wrongly signed, stale or replayed answer
    # (decisioning.services.call).
    accept_unsigned_answers = models.BooleanField(default=False, db_default=False)
    # `whsec_<base64>`, encrypted (core.crypto); read only through `secrets_at()` to sign.
    secret_encrypted = models.TextField()
    # The secret before the last rotation, still signing until `previous_secret_expires_at`.
    previous_secret_encrypted = models.TextField(blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # --- The circuit breaker (decisioning.breaker): failed calls in a row; since when the
    # endpoint is degraded (not called, `on_failure` decides at once), and when the next
    # authorization may probe it.
    consecutive_failures = models.IntegerField(default=0, db_default=0)
    degraded_at = models.DateTimeField(null=True, blank=True)
    next_probe_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="decisioning_endpoint_inst_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["institution"],
                condition=Q(card_product__isnull=True),
                name="decisioning_endpoint_one_per_institution",
            ),
            models.UniqueConstraint(
                fields=["card_product"],
                condition=Q(card_product__isnull=False),
                name="decisioning_endpoint_one_per_card_product",
            ),
            models.CheckConstraint(
                condition=Q(timeout_ms__gte=MIN_TIMEOUT_MS, timeout_ms__lte=MAX_TIMEOUT_MS),
                name="decisioning_endpoint_timeout_range",
            ),
            models.CheckConstraint(
                condition=Q(on_failure__in=["decline", "approve", "standin"]),
                name="decisioning_endpoint_on_failure_valid",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=["live", "shadow", "jit"]),
                name="decisioning_endpoint_mode_valid",
            ),
            models.CheckConstraint(
                condition=(
                    Q(previous_secret_encrypted="", previous_secret_expires_at__isnull=True)
                    | (
                        ~Q(previous_secret_encrypted="")
                        & Q(previous_secret_expires_at__isnull=False)
                    )
                ),
                name="decisioning_endpoint_previous_secret_pair",
            ),
        ]

    def __str__(self):
        return f"{self.id} ({self.url})"

    # --- the signing secrets (callers: decisioning's services and re-encryption only)
    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted, context=self._context("secret"))

    def previous_secret(self) -> str | None:
        if not self.previous_secret_encrypted:
            return None
        return crypto.decrypt(
            self.previous_secret_encrypted, context=self._context("previous_secret")
        )

    def seal(self, secret: str) -> None:
        """Encrypt `secret` under the newest key, bound to this endpoint."""
        self.secret_encrypted = crypto.encrypt(secret, context=self._context("secret"))

    def seal_previous(self, secret: str | None) -> None:
        self.previous_secret_encrypted = (
            ""
            if secret is None
            else crypto.encrypt(secret, context=self._context("previous_secret"))
        )

    def secrets_at(self, at) -> list[str]:
        """The secrets that sign a request made at `at`: the current one, and the previous one
        while its overlap lasts."""
        secrets = [self.secret()]
        if self.previous_secret_encrypted and at < self.previous_secret_expires_at:
            secrets.append(self.previous_secret())
        return secrets

    def _context(self, column: str) -> str:
        return f"decisioning.DecisioningEndpoint.{column}:{self.id}"
