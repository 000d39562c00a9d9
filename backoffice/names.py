"""Names, not codes (issue 48 item 2; docs/back-office.md, "Names, not codes"): what the back
office writes in place of the codes the API and the networks speak.

- a country by its name (ISO 3166-1, from pycountry: "Germany", not "276");
- a merchant category by its description (ISO 18245, from the `iso18245` package), its code
  beside it, as networks and the monitoring rules name it: "Groceries and supermarkets (5411)";
- a statement line's or an authorization's type, and a monitoring rule's kind, in plain words;
- a customer with what tells two people of one name apart: born, where they live, their e-mail
  masked. Never their national id, not even its last four (the search finds them by it; it is
  shown on their own page only).

The codes stay what is stored, filtered and searched; only what is shown changes. An unknown
code is shown as it is.
"""

from functools import cache

import iso18245
import pycountry
from django.contrib import admin
from django.utils.html import format_html

from accounts.models import StatementLine
from monitoring.models import MonitoringRule


@cache
def country_name(code: str | None) -> str:
    """An ISO 3166-1 numeric code ("276") as the country's name ("Germany")."""
    if not code:
        return "—"
    country = pycountry.countries.get(numeric=code)
    if country is None:
        return code
    return getattr(country, "common_name", None) or country.name


def countries_text(codes) -> str:
    return ", ".join(country_name(code) for code in codes or ()) or "—"


@cache
def mcc_description(code: str | None) -> str:
    """An ISO 18245 merchant category code as its description (the standard's words, else a
    network's), or "" for a code the standard does not assign."""
    try:
        mcc = iso18245.get_mcc(code)
    except (iso18245.MCCNotFound, iso18245.InvalidMCC, TypeError, ValueError):
        return ""
    description = (
        mcc.iso_description
        or mcc.visa_description
        or mcc.mastercard_description
        or mcc.usda_description
    )
    return description.replace(" -- ", ": ")


def mcc_name(code: str | None) -> str:
    """ "Groceries and supermarkets (5411)": the description, and the code the networks and the
    monitoring rules use."""
    if not code:
        return "—"
    description = mcc_description(code)
    return f"{description} ({code})" if description else code


def mccs_text(codes) -> str:
    return "; ".join(mcc_name(code) for code in codes or ()) or "—"


# A card payment's or a statement line's type (the API's codes, the networks' words).
TRANSACTION_TYPES = {
    StatementLine.Type.GOODS: "purchase",
    StatementLine.Type.CASH: "cash withdrawal",
    StatementLine.Type.CASH_DEC: "money out",
    StatementLine.Type.CASH_INC: "money in",
    StatementLine.Type.RETURN: "refund",
}
RULE_KINDS = {
    MonitoringRule.Kind.AMOUNT_THRESHOLD: "one payment over an amount",
    MonitoringRule.Kind.VELOCITY_COUNT: "too many payments in a window",
    MonitoringRule.Kind.VELOCITY_AMOUNT: "too much spent in a window",
    MonitoringRule.Kind.BLOCKED_MCC: "a blocked merchant category",
    MonitoringRule.Kind.BLOCKED_COUNTRY: "a merchant in a blocked country",
}


def transaction_type(code: str) -> str:
    return TRANSACTION_TYPES.get(code, code)


def rule_kind(code: str) -> str:
    return RULE_KINDS.get(code, code)


@admin.display(description="type", ordering="type")
def type_display(obj) -> str:
    """A statement line's or a card payment's type in words: put this function itself in an
    admin's `list_display` or `fields` (and its `readonly_fields`)."""
    return transaction_type(obj.type)


def words_filter(field: str, words: dict, title: str) -> type[admin.SimpleListFilter]:
    """A list filter on `field` whose choices read as `words` (code -> words), in place of
    Django's filter on a field's choices, which shows their codes."""

    class WordsFilter(admin.SimpleListFilter):
        parameter_name = field.replace("__", "_")

        def lookups(self, request, model_admin):
            return list(words.items())

        def queryset(self, request, queryset):
            if self.value():
                return queryset.filter(**{field: self.value()})
            return queryset

    WordsFilter.title = title
    return WordsFilter


# --- Customers: two people of one name told apart ---------------------------------------------
def masked_email(address: str | None) -> str:
    """ "a•••@example.com": enough to tell two people apart and for the caller to recognise, not
    an address to write to."""
    if not address:
        return "—"
    local, _, domain = address.partition("@")
    return f"{local[:1]}•••@{domain}" if domain else f"{local[:1]}•••"


def lives_in(customer) -> str:
    """ "London, United Kingdom": their address's city and country, else their country."""
    if customer.address_city:
        return f"{customer.address_city}, {country_name(customer.address_country_code)}"
    return country_name(customer.country_code)


def customer_detail(customer) -> str:
    """What tells a customer from another of the same name: "born 1815-12-10 · London, United
    Kingdom · a•••@example.com" (what they have of it)."""
    parts = []
    if customer.date_of_birth:
        parts.append(f"born {customer.date_of_birth.isoformat()}")
    parts.append(lives_in(customer))
    if customer.email:
        parts.append(masked_email(customer.email))
    return " · ".join(parts)


def customer_name(customer) -> str:
    return f"{customer.first_name} {customer.last_name}"


def customer_detail_html(customer):
    """The quieter line under a customer's name in a list that tells them apart."""
    return format_html(
        '<br><span class="quiet customer-detail">{}</span>', customer_detail(customer)
    )
