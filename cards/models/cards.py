"""Cards: a PAN on an account, held by a customer, with its status, controls, limits and PIN.

The PAN and CVV are encrypted at rest (`core.crypto`, AES-GCM with a key id; the associated data
binds each ciphertext to its column and card). Lookups go through `pan_fingerprint`, a keyed
HMAC (`cards.secrets`); display uses the first six and last four digits, which are not secret.
Only one live card (inactive, active, suspended) holds a PAN at a time: a renewal or a reissue
keeps the PAN on a new card and closes the old one (a partial unique index).
"""

import calendar
from datetime import date

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper
from django.utils import timezone

from core import crypto
from core.ids import new_id
from core.metadata import MetadataField
from core.models import Timestamped
from institutions.models import Institution

from .products import CardProduct


def _card_id():
    return new_id("card")


class Card(Timestamped):
    class Status(models.TextChoices):
        INACTIVE = "inactive"
        ACTIVE = "active"
        SUSPENDED = "suspended"
        LOST = "lost"
        STOLEN = "stolen"
        CLOSED = "closed"
        EXPIRED = "expired"

    class StatusReasonCode(models.TextChoices):
        """Why staff changed a card's status (docs/back-office.md, "What support may do"): in
        the `card.status_changed` event's `reasonCode` beside its free-text `reason`. Not
        stored on the card: its `status_reason` keeps the text."""

        CUSTOMER_REQUEST = "customer_request", "customer request"
        LOST = "lost"
        STOLEN = "stolen"
        FRAUD_SUSPECTED = "fraud_suspected", "fraud suspected"
        CARD_FOUND = "card_found", "card found"
        FRAUD_RULED_OUT = "fraud_ruled_out", "fraud ruled out"
        OTHER = "other"

    class RiskLevel(models.TextChoices):
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    class Succession(models.TextChoices):
        RENEWAL = "renewal"
        REISSUE = "reissue"
        REPLACEMENT = "replacement"

    LIVE = (Status.INACTIVE, Status.ACTIVE, Status.SUSPENDED)

    id = models.CharField(primary_key=True, max_length=40, default=_card_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="cards")
    product = models.ForeignKey(CardProduct, on_delete=models.PROTECT, related_name="cards")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="cards")
    customer = models.ForeignKey(
        "customers.Customer", on_delete=models.PROTECT, related_name="cards"
    )
    # A supplementary card: same account as its primary card, another cardholder.
    primary_card = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supplementary_cards"
    )
    # The card this one renews, reissues or replaces (`succession` says which).
    predecessor = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="successor"
    )
    succession = models.CharField(max_length=16, choices=Succession.choices, null=True, blank=True)
    # The first card of a renewal/reissue/replacement chain (null: this card is the first). A
    # chain shares its limit usage, so a new card does not restart the day's or month's count.
    lineage = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    form = models.CharField(max_length=16, choices=CardProduct.Form.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.INACTIVE)
    status_reason = models.CharField(max_length=500, blank=True)
    risk_level = models.CharField(max_length=8, choices=RiskLevel.choices, default=RiskLevel.LOW)
    embossed_name = models.CharField(max_length=26)
    delivery_line1 = models.CharField(max_length=200, null=True, blank=True)
    delivery_line2 = models.CharField(max_length=200, null=True, blank=True)
    delivery_city = models.CharField(max_length=100, null=True, blank=True)
    delivery_postal_code = models.CharField(max_length=20, null=True, blank=True)
    delivery_country_code = models.CharField(max_length=3, null=True, blank=True)

    # Secrets: never in clear in the database, the admin, logs or responses without the scope.
    pan_encrypted = models.TextField(editable=False)
    cvv_encrypted = models.TextField(editable=False)
    pan_fingerprint = models.CharField(max_length=64, editable=False)
    pan_first6 = models.CharField(max_length=6, editable=False)
    pan_last4 = models.CharField(max_length=4, editable=False)
    pan_length = models.PositiveSmallIntegerField(editable=False)
    # The card is valid through the last day of its expiry month.
    expiry_year = models.PositiveSmallIntegerField()
    expiry_month = models.PositiveSmallIntegerField()
    expires_on = models.DateField()

    # Security settings (controls).
    ecommerce = models.BooleanField(default=True)
    contactless = models.BooleanField(default=True)
    atm = models.BooleanField(default=True)
    international = models.BooleanField(default=True)
    magstripe = models.BooleanField(default=False)
    blocked_mccs = ArrayField(models.CharField(max_length=4), default=list, blank=True)
    blocked_countries = ArrayField(models.CharField(max_length=3), default=list, blank=True)

    # Limits, in minor units of the account's currency.
    limit_per_transaction = models.BigIntegerField()
    limit_daily = models.BigIntegerField()
    limit_monthly = models.BigIntegerField()
    limit_daily_cash = models.BigIntegerField()

    # PIN: a keyed hash only (`cards.secrets`); three wrong tries block it.
    pin_hash = models.CharField(max_length=200, null=True, blank=True, editable=False)
    pin_failed_attempts = models.PositiveSmallIntegerField(default=0)
    pin_blocked = models.BooleanField(default=False)
    pin_changed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()

    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        # The back office's protective card actions (freeze, unfreeze, block lost or stolen),
        # which every staff role has (docs/back-office.md, "Roles").
        permissions = [("protect_card", "Can freeze, unfreeze and block cards (lost, stolen)")]
        constraints = [
            models.UniqueConstraint(
                fields=["pan_fingerprint"],
                condition=Q(status__in=["inactive", "active", "suspended"]),
                name="card_live_pan_unique",
            ),
            models.CheckConstraint(
                condition=Q(expiry_month__gte=1, expiry_month__lte=12),
                name="card_expiry_month_valid",
            ),
            models.CheckConstraint(
                condition=Q(limit_per_transaction__gte=0)
                & Q(limit_daily__gte=0)
                & Q(limit_monthly__gte=0)
                & Q(limit_daily_cash__gte=0),
                name="card_limits_nonneg",
            ),
            models.CheckConstraint(
                condition=Q(pin_failed_attempts__lte=3), name="card_pin_attempts_max"
            ),
            models.CheckConstraint(
                condition=Q(succession__isnull=True) | Q(predecessor__isnull=False),
                name="card_succession_has_predecessor",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="card_institution_idx"),
            models.Index(fields=["account", "-id"], name="card_account_idx"),
            models.Index(fields=["customer", "-id"], name="card_customer_idx"),
            models.Index(fields=["pan_fingerprint"], name="card_pan_fingerprint_idx"),
            # The back office's search (backoffice/search.py).
            models.Index(fields=["pan_last4"], name="card_pan_last4_idx"),
            models.Index(Upper("embossed_name"), name="card_embossed_name_idx"),
            models.Index(
                fields=["expires_on"],
                condition=Q(status__in=["inactive", "active", "suspended"]),
                name="card_live_expiry_idx",
            ),
        ]

    def __str__(self):
        return f"{self.masked_pan} ({self.status})"

    @property
    def masked_pan(self) -> str:
        return f"{self.pan_first6}{'*' * (self.pan_length - 10)}{self.pan_last4}"

    @property
    def successor_id(self) -> str | None:
        """The card that renewed, reissued or replaced this one, if any."""
        try:
            return self.successor.pk
        except Card.successor.RelatedObjectDoesNotExist:
            return None

    @property
    def pin_is_set(self) -> bool:
        return self.pin_hash is not None

    @property
    def pin_remaining_tries(self) -> int:
        return 0 if self.pin_blocked else 3 - self.pin_failed_attempts

    @property
    def lineage_root_id(self) -> str:
        return self.lineage_id or self.id

    @property
    def is_live(self) -> bool:
        return self.status in self.LIVE

    @property
    def delivery_address(self) -> dict | None:
        if self.delivery_line1 is None:
            return None
        return {
            "line1": self.delivery_line1,
            "line2": self.delivery_line2,
            "city": self.delivery_city,
            "postal_code": self.delivery_postal_code,
            "country_code": self.delivery_country_code,
        }

    def set_delivery_address(self, address: dict | None) -> None:
        address = address or {}
        self.delivery_line1 = address.get("line1")
        self.delivery_line2 = address.get("line2")
        self.delivery_city = address.get("city")
        self.delivery_postal_code = address.get("postal_code")
        self.delivery_country_code = address.get("country_code")

    def set_expiry(self, year: int, month: int) -> None:
        self.expiry_year, self.expiry_month = year, month
        self.expires_on = date(year, month, calendar.monthrange(year, month)[1])

    # --- secrets (callers: cards.services only)
    def pan(self) -> str:
        return crypto.decrypt(self.pan_encrypted, context=self._context("pan"))

    def cvv(self) -> str:
        return crypto.decrypt(self.cvv_encrypted, context=self._context("cvv"))

    def seal(self, *, pan: str, cvv: str) -> None:
        """Encrypt `pan` and `cvv` under the newest key, bound to this card."""
        from ..secrets import pan_fingerprint

        self.pan_encrypted = crypto.encrypt(pan, context=self._context("pan"))
        self.cvv_encrypted = crypto.encrypt(cvv, context=self._context("cvv"))
        self.pan_fingerprint = pan_fingerprint(pan)
        self.pan_first6, self.pan_last4, self.pan_length = pan[:6], pan[-4:], len(pan)

    def _context(self, column: str) -> str:
        return f"cards.Card.{column}:{self.id}"
