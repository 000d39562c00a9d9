"""Customers: the people an institution issues accounts and cards to.

`national_id` is encrypted at rest (`core.crypto`, AES-GCM) and only its last four characters
are kept in clear, for display, and only when the id has at least
`NATIONAL_ID_LAST4_MIN_LENGTH` letters and digits: the last four of a shorter id would be all or
most of it (`national_id_last4` is then NULL everywhere it is shown: the API of both versions
and the admin). The full value is never returned by the API or shown in the admin.
The associated data names the column and the customer, so a ciphertext copied into another
customer's row does not decrypt.
"""

from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from core import crypto
from core.ids import new_id
from core.metadata import MetadataField
from core.models import Timestamped
from institutions.models import Institution

NATIONAL_ID_CONTEXT = "customers.Customer.national_id"
# Separators ('-', '/', spaces) tell nothing: "12-34-56" has 6 characters that count.
NATIONAL_ID_LAST4_MIN_LENGTH = 8


def national_id_last4(national_id: str) -> str | None:
    """The last four characters of `national_id` to show, or None when it is too short for its
    last four to leave most of it hidden (fewer than NATIONAL_ID_LAST4_MIN_LENGTH letters and
    digits)."""
    if sum(character.isalnum() for character in national_id) < NATIONAL_ID_LAST4_MIN_LENGTH:
        return None
    return national_id[-4:]


def _customer_id():
    return new_id("cus")


class Customer(Timestamped):
    id = models.CharField(primary_key=True, max_length=40, default=_customer_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="customers")
    first_name = models.CharField(max_length=100)
    last_name = models.CharField(max_length=100)
    # ISO 3166-1 numeric, three digits (the spec's `countryId`).
    country_code = models.CharField(max_length=3)
    email = models.EmailField(max_length=254, null=True, blank=True)
    phone = models.CharField(max_length=16, null=True, blank=True)
    date_of_birth = models.DateField(null=True, blank=True)
    national_id_encrypted = models.TextField(null=True, blank=True, editable=False)
    national_id_last4 = models.CharField(max_length=4, null=True, blank=True, editable=False)
    address_line1 = models.CharField(max_length=200, null=True, blank=True)
    address_line2 = models.CharField(max_length=200, null=True, blank=True)
    address_city = models.CharField(max_length=100, null=True, blank=True)
    address_postal_code = models.CharField(max_length=20, null=True, blank=True)
    address_country_code = models.CharField(max_length=3, null=True, blank=True)
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="customer_institution_idx"),
            # The back office's search (backoffice/search.py): what a caller says on the phone.
            models.Index(Upper("last_name"), name="customer_last_name_idx"),
            models.Index(Upper("first_name"), name="customer_first_name_idx"),
            models.Index(Upper("email"), name="customer_email_idx"),
            models.Index(fields=["phone"], name="customer_phone_idx"),
            models.Index(fields=["national_id_last4"], name="customer_national_id_last4_idx"),
        ]

    def __str__(self):
        return f"{self.first_name} {self.last_name} ({self.id})"

    @property
    def address(self) -> dict | None:
        if self.address_line1 is None:
            return None
        return {
            "line1": self.address_line1,
            "line2": self.address_line2,
            "city": self.address_city,
            "postal_code": self.address_postal_code,
            "country_code": self.address_country_code,
        }

    def set_address(self, address: dict | None) -> None:
        address = address or {}
        self.address_line1 = address.get("line1")
        self.address_line2 = address.get("line2")
        self.address_city = address.get("city")
        self.address_postal_code = address.get("postal_code")
        self.address_country_code = address.get("country_code")

    def set_national_id(self, national_id: str | None) -> None:
        if national_id is None:
            self.national_id_encrypted = None
            self.national_id_last4 = None
        else:
            self.national_id_encrypted = crypto.encrypt(national_id, context=self._id_context())
            self.national_id_last4 = national_id_last4(national_id)

    def national_id(self) -> str | None:
        """The full national id, for the few internal uses that need it (never for display)."""
        if self.national_id_encrypted is None:
            return None
        return crypto.decrypt(self.national_id_encrypted, context=self._id_context())

    def _id_context(self) -> str:
        return f"{NATIONAL_ID_CONTEXT}:{self.id}"
