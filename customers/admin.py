"""Back office for customers: review and correct, through `customer_update`.

The national id is never shown nor editable here: only its last four characters, masked, and
none of it when the id is too short for that (`customers.models.national_id_last4`). Edits
go through `customer_update`, so `customer.updated` is emitted as for the API. Customers are not
added here (institutions onboard them through the API, with their idempotency and their
national id) and never deleted (their accounts, cards and events refer to them).
"""

import pycountry
from django import forms
from django.contrib import admin
from django.db.models import Q

from core.admin import ModelAdmin, metadata_display

from .models import Customer
from .services import customer_field_error, customer_update

# Form fields that map one to one onto `customer_update`'s changes.
PLAIN_FIELDS = ["first_name", "last_name", "country_code", "email", "phone", "date_of_birth"]
# Form fields that make up the address, which `customer_update` replaces whole.
ADDRESS_FIELDS = {
    "address_line1": "line1",
    "address_line2": "line2",
    "address_city": "city",
    "address_postal_code": "postal_code",
    "address_country_code": "country_code",
}


def _validate_country(value):
    if value is None:
        return value
    if len(value) != 3 or not value.isdigit() or pycountry.countries.get(numeric=value) is None:
        raise forms.ValidationError(
            'Must be an ISO 3166-1 numeric country code of three digits, e.g. "276".'
        )
    return value


def country_name(code: str | None) -> str:
    country = pycountry.countries.get(numeric=code) if code else None
    return f"{code} {country.name}" if country else (code or "—")


class CustomerForm(forms.ModelForm):
    class Meta:
        model = Customer
        fields = [
            "first_name",
            "last_name",
            "country_code",
            "email",
            "phone",
            "date_of_birth",
            *ADDRESS_FIELDS,
        ]
        help_texts = {
            "country_code": 'ISO 3166-1 numeric, e.g. "276" (Germany).',
            "address_country_code": 'ISO 3166-1 numeric, e.g. "276" (Germany).',
            "phone": "E.164, e.g. +4915112345678.",
        }

    def clean_country_code(self):
        return _validate_country(self.cleaned_data["country_code"])

    def clean_address_country_code(self):
        return _validate_country(self.cleaned_data.get("address_country_code"))

    # The customer rules are the service's (`customer_field_error`): shown here field by field.
    def clean_phone(self):
        return self._rule("phone")

    def clean_date_of_birth(self):
        return self._rule("date_of_birth")

    def _rule(self, name: str):
        value = self.cleaned_data.get(name)
        message = customer_field_error(name, value)
        if message is not None:
            raise forms.ValidationError(message)
        return value

    def clean(self):
        cleaned = super().clean()
        given = {name: cleaned.get(name) for name in ADDRESS_FIELDS}
        if any(value is not None for value in given.values()):
            for name in ["address_line1", "address_city", "address_postal_code"]:
                if given[name] is None and name not in self.errors:
                    self.add_error(name, "Required when an address is given.")
            if "address_country_code" not in self.errors and given["address_country_code"] is None:
                self.add_error("address_country_code", "Required when an address is given.")
        return cleaned

    def address(self) -> dict | None:
        values = {key: self.cleaned_data.get(name) for name, key in ADDRESS_FIELDS.items()}
        return values if any(value is not None for value in values.values()) else None


class CountryFilter(admin.SimpleListFilter):
    title = "country"
    parameter_name = "country"

    def lookups(self, request, model_admin):
        codes = (
            model_admin.get_queryset(request)
            .order_by("country_code")
            .values_list("country_code", flat=True)
            .distinct()
        )
        return [(code, country_name(code)) for code in codes]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(country_code=self.value())
        return queryset


@admin.register(Customer)
class CustomerAdmin(ModelAdmin):
    form = CustomerForm
    list_display = ["id", "first_name", "last_name", "institution", "country", "created_at"]
    list_filter = [CountryFilter, "institution"]
    list_select_related = ["institution"]
    search_fields = ["=id", "first_name", "last_name", "email"]
    readonly_fields = [
        "id",
        "institution",
        "national_id_masked",
        metadata_display,
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["id", "institution", "created_at", "updated_at"]}),
        (
            "Person",
            {
                "fields": [
                    "first_name",
                    "last_name",
                    "country_code",
                    "email",
                    "phone",
                    "date_of_birth",
                    "national_id_masked",
                ]
            },
        ),
        ("Address", {"fields": list(ADDRESS_FIELDS)}),
        ("Client metadata (set through the API)", {"fields": [metadata_display]}),
    ]

    def get_queryset(self, request):
        # The ciphertext never leaves the database for the admin: only whether there is one.
        return (
            super()
            .get_queryset(request)
            .defer("national_id_encrypted")
            .annotate(has_national_id=Q(national_id_encrypted__isnull=False))
        )

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="country", ordering="country_code")
    def country(self, obj):
        return country_name(obj.country_code)

    @admin.display(description="national id")
    def national_id_masked(self, obj):
        if obj.national_id_last4:
            return f"•••• {obj.national_id_last4}"
        # A short id keeps no last four (customers.models.national_id_last4).
        return "•••• (too short to show any of it)" if obj.has_national_id else "—"

    def save_model(self, request, obj, form, change):
        changed = set(form.changed_data)
        changes = {name: form.cleaned_data[name] for name in PLAIN_FIELDS if name in changed}
        if changed & set(ADDRESS_FIELDS):
            changes["address"] = form.address()
        customer = customer_update(customer=obj, changes=changes)
        obj.updated_at = customer.updated_at
