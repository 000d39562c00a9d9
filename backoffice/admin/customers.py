"""Customers: their page, to read first, and the form that corrects their details.

The page (issue 33 item 2): who the customer is, their accounts with balances, cards, open
monitoring alerts, active holds, disputes and latest activity (pending apart from posted, what
was not charged shown so), each row linking to its record. Editing their details is a step: the
page's "Edit details" button opens Django's form (`?edit=1`), which saves through
`customer_update`, so `customer.updated` is emitted as for the API. Each card has the buttons of
the protective card actions the user may run (freeze, unfreeze, block lost or stolen:
`backoffice.actions.cards`, every role's), which come back to this page once they ran.

The national id is never shown nor editable here: only its last four characters, masked, and
none of it when the id is too short for that (`customers.models.national_id_last4`). Nothing
else secret is read: cards without their secret columns (`backoffice.admin.cards.SECRET_FIELDS`,
shown by masked PAN), account numbers by their last four digits. Customers are not added here
(institutions onboard them through the API, with their idempotency and their national id) and
never deleted (their accounts, cards and events refer to them).
"""

from heapq import merge

import pycountry
from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db.models import Q
from django.middleware.csrf import get_token
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from accounts.models import Account, Hold, StatementLine
from accounts.models.statement import POSITION
from backoffice.actions.cards import PROTECTIVE_BUTTONS
from backoffice.actions.customers import change_customer
from backoffice.actions.forms import DeclaredForms
from backoffice.admin.cards import SECRET_FIELDS
from backoffice.admin.statement_lines import (
    LINE_STATE_RELATED,
    LINE_STATES,
    line_amount_display,
    line_state,
)
from backoffice.kit import (
    RETURN_TO,
    ModelAdmin,
    admin_link,
    changelist_link,
    masked_account_number,
    metadata_display,
)
from backoffice.names import (
    country_name,
    lives_in,
    masked_email,
    transaction_type,
)
from cards.models import Card
from core.money import money
from customers.models import Customer
from customers.services import customer_field_error
from disputes.models import Dispute
from monitoring.models import MonitoringAlert

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


# The countries by name, as the form offers them (the code is what it posts and stores).
COUNTRY_CHOICES = sorted(
    ((country.numeric, country_name(country.numeric)) for country in pycountry.countries),
    key=lambda choice: choice[1],
)


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
        widgets = {
            "country_code": forms.Select(choices=[("", "—"), *COUNTRY_CHOICES]),
            "address_country_code": forms.Select(choices=[("", "—"), *COUNTRY_CHOICES]),
        }
        help_texts = {"phone": "E.164, e.g. +4915112345678."}

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

    def changes(self) -> dict:
        """What the staff user changed, as `customer_update` takes it: the address whole."""
        changed = set(self.changed_data)
        changes = {name: self.cleaned_data[name] for name in PLAIN_FIELDS if name in changed}
        if changed & set(ADDRESS_FIELDS):
            changes["address"] = self.address()
        return changes


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


# Rows each panel shows at most; a link under it lists them all.
PANEL_ROWS = 20
EDIT = "edit"  # the customer page's query parameter that opens the form


def _table(headers: list[str], rows, empty: str, more):
    if not rows:
        return format_html("<p>{}</p>{}", empty, more)
    head = format_html_join("", "<th>{}</th>", ((header,) for header in headers))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows),
    )
    return format_html(
        '<table class="customer-panel"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>{}',
        head,
        body,
        more,
    )


@admin.register(Customer)
class CustomerAdmin(DeclaredForms, ModelAdmin):
    """The customer's page (`change_view`), and the form of their details a step away
    (`?edit=1`), saved through `customer_update`."""

    form = CustomerForm
    change_write = change_customer
    # Two people of one name told apart by when they were born, where they live and their
    # e-mail, masked (backoffice.names); never by their national id.
    list_display = [
        "id",
        "first_name",
        "last_name",
        "born",
        "lives_in",
        "email_masked",
        "institution",
        "created_at",
    ]
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

    @admin.display(description="born", ordering="date_of_birth")
    def born(self, obj):
        return obj.date_of_birth.isoformat() if obj.date_of_birth else "—"

    @admin.display(description="lives in")
    def lives_in(self, obj):
        return lives_in(obj)

    @admin.display(description="e-mail")
    def email_masked(self, obj):
        return masked_email(obj.email)

    @admin.display(description="national id")
    def national_id_masked(self, obj):
        if obj.national_id_last4:
            return f"•••• {obj.national_id_last4}"
        # A short id keeps no last four (customers.models.national_id_last4).
        return "•••• (too short to show any of it)" if obj.has_national_id else "—"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The page to read first: who they are, then their money (`customer_page.html`).
        Editing their details is a step (`?edit=1`, a button on the page), and the form's
        post; Django's own view answers those, and an unknown or forbidden id."""
        if request.method == "POST" or EDIT in request.GET:
            return super().change_view(request, object_id, form_url, extra_context)
        customer = self.get_object(request, unquote(object_id))
        if customer is None or not self.has_view_or_change_permission(request, customer):
            return super().change_view(request, object_id, form_url, extra_context)
        context = {
            **self.admin_site.each_context(request),
            "title": f"{customer.first_name} {customer.last_name}",
            "subtitle": None,
            "opts": self.opts,
            "original": customer,
            "details": self._details(customer),
            "can_edit": self.has_change_permission(request, customer),
            # Beside who they are, in the first screen (1400 x 900): what just happened.
            "activity": (
                f"Latest activity (newest {PANEL_ROWS} lines)",
                self.statement_lines_panel(customer),
            ),
            "panels": [
                ("Accounts", self.accounts_panel(customer)),
                ("Cards", self.cards_panel(customer, request)),
                ("Open monitoring alerts", self.alerts_panel(customer)),
                ("Holds (money set aside)", self.holds_panel(customer)),
                ("Disputes", self.disputes_panel(customer)),
            ],
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "backoffice/customer_page.html", context)

    def _details(self, customer) -> list[tuple[str, str]]:
        parts = (
            country_name(value) if field == "address_country_code" else value
            for field, value in ((field, getattr(customer, field)) for field in ADDRESS_FIELDS)
        )
        address = ", ".join(part for part in parts if part and part != "—")
        return [
            ("Customer", customer.pk),
            ("Institution", str(customer.institution)),
            ("Country", country_name(customer.country_code)),
            ("E-mail", customer.email or "—"),
            ("Phone", customer.phone or "—"),
            (
                "Date of birth",
                customer.date_of_birth.isoformat() if customer.date_of_birth else "—",
            ),
            ("National id", self.national_id_masked(customer)),
            ("Address", address or "—"),
            ("Customer since", customer.created_at.strftime("%Y-%m-%d")),
            ("Client metadata (set through the API)", metadata_display(customer)),
        ]

    def _accounts(self, customer) -> list[Account]:
        if not hasattr(customer, "_panel_accounts"):
            customer._panel_accounts = list(
                Account.objects.filter(Q(customer=customer) | Q(secondary_customer=customer))
                .select_related("product")
                .order_by("-pk")[:PANEL_ROWS]
            )
        return customer._panel_accounts

    @admin.display(description="accounts")
    def accounts_panel(self, customer):
        rows = [
            (
                admin_link(account, account.pk),
                "holder" if account.customer_id == customer.pk else "secondary holder",
                account.product.name if account.product else "—",
                masked_account_number(account),
                account.status,
                money(account.posted, account.currency),
                money(account.available, account.currency),
            )
            for account in self._accounts(customer)
        ]
        return _table(
            ["account", "role", "product", "number", "status", "posted", "available"],
            rows,
            "No account.",
            changelist_link(Account, "All accounts of this customer", customer=customer.pk),
        )

    @admin.display(description="cards")
    def cards_panel(self, customer, request=None):
        cards = (
            Card.objects.defer(*SECRET_FIELDS)
            .filter(customer=customer)
            .select_related("product")
            .order_by("-pk")[:PANEL_ROWS]
        )
        buttons = _protective_buttons(request, customer) if request is not None else None
        rows = [
            (
                admin_link(card, card.masked_pan),
                card.status,
                card.form,
                card.product.name,
                f"{card.expiry_month:02d}/{card.expiry_year}",
                card.account_id,
                *([] if buttons is None else [buttons(card)]),
            )
            for card in cards
        ]
        return _table(
            [
                "card (masked PAN)",
                "status",
                "form",
                "product",
                "expiry",
                "account",
                *([] if buttons is None else ["protect"]),
            ],
            rows,
            "No card.",
            changelist_link(Card, "All cards of this customer", customer=customer.pk),
        )

    def alerts_panel(self, customer):
        alerts = (
            MonitoringAlert.objects.filter(
                Q(card__customer=customer)
                | Q(account__in=[account.pk for account in self._accounts(customer)]),
                status=MonitoringAlert.Status.OPEN,
            )
            .select_related("rule")
            .order_by("-pk")[:PANEL_ROWS]
        )
        rows = [
            (
                admin_link(alert, alert.pk),
                alert.rule.name if alert.rule is not None else alert.get_subject_type_display(),
                alert.action,
                money(alert.amount, alert.currency),
                alert.created_at.strftime("%Y-%m-%d %H:%M"),
            )
            for alert in alerts
        ]
        return _table(["alert", "rule", "action", "amount", "at"], rows, "No open alert.", "")

    def holds_panel(self, customer):
        holds = Hold.objects.filter(
            account__in=[account.pk for account in self._accounts(customer)],
            status=Hold.Status.ACTIVE,
        ).order_by("-pk")[:PANEL_ROWS]
        rows = [
            (
                admin_link(hold, hold.pk),
                hold.account_id,
                hold.get_purpose_display(),
                money(hold.amount - hold.captured_amount, hold.currency),
                hold.expires_at.strftime("%Y-%m-%d %H:%M"),
            )
            for hold in holds
        ]
        return _table(
            ["hold", "account", "for", "set aside", "expires"], rows, "No active hold.", ""
        )

    def disputes_panel(self, customer):
        disputes = Dispute.objects.filter(
            account__in=[account.pk for account in self._accounts(customer)]
        ).order_by("-pk")[:PANEL_ROWS]
        rows = [
            (
                admin_link(dispute, dispute.pk),
                dispute.outcome or dispute.status,
                dispute.get_reason_display(),
                money(dispute.amount, dispute.currency),
                money(dispute.remaining, dispute.currency),
            )
            for dispute in disputes
        ]
        return _table(
            ["dispute", "stage", "reason", "disputed", "still open"], rows, "No dispute.", ""
        )

    @admin.display(description=f"statement lines (newest {PANEL_ROWS})")
    def statement_lines_panel(self, customer):
        # Each account's newest lines from its own index, merged: no sort of every line of
        # every account.
        newest = (
            StatementLine.objects.filter(account=account)
            .select_related(*LINE_STATE_RELATED)
            .order_by(POSITION.desc())[:PANEL_ROWS]
            for account in self._accounts(customer)
        )
        lines = list(merge(*newest, key=lambda line: line.pk, reverse=True))[:PANEL_ROWS]
        accounts = {account.pk: account for account in self._accounts(customer)}
        pending = [line for line in lines if line_state(line) == "pending"]
        settled = [line for line in lines if line_state(line) != "pending"]
        return format_html(
            "<h3>Pending: authorized, not yet presented</h3>{}"
            "<h3>Posted, and what was not charged</h3>{}",
            _lines_table(pending, "No pending line.", accounts),
            _lines_table(settled, "No statement line.", accounts),
        )


def _protective_buttons(request, customer):
    """A function of a card: the buttons of the protective actions (freeze, unfreeze, block
    lost or stolen) the user may run on it, each posting to the cards' list as a card's own
    button does, then back to this page (`RETURN_TO`); None when the user may run none."""
    offered = admin.site._registry[Card].get_actions(request)
    actions = [button for button in PROTECTIVE_BUTTONS if button[0].name in offered]
    if not actions:
        return None
    changelist = reverse("admin:cards_card_changelist")
    token = get_token(request)
    back = request.get_full_path()

    def buttons(card):
        return (
            format_html_join(
                "",
                '<form method="post" action="{}" class="object-action card-protection">'
                '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
                '<input type="hidden" name="action" value="{}">'
                '<input type="hidden" name="_selected_action" value="{}">'
                '<input type="hidden" name="index" value="0">'
                '<input type="hidden" name="{}" value="{}">'
                '<button type="submit" class="button object-action-button" name="object_action" '
                'value="{}">{}</button></form>',
                (
                    (changelist, token, action.name, card.pk, RETURN_TO, back, action.name, label)
                    for action, label, statuses in actions
                    if card.status in statuses
                ),
            )
            or "—"
        )

    return buttons


def _lines_table(lines: list[StatementLine], empty: str, accounts: dict):
    # Narrow enough to sit beside who they are: the line linked by its time, its account by
    # its number's last four (the ids are on the line's page).
    rows = [
        (
            admin_link(line, line.created_at.strftime("%Y-%m-%d %H:%M")),
            masked_account_number(accounts[line.account_id]),
            transaction_type(line.type),
            LINE_STATES[line_state(line)],
            line_amount_display(line),
            line.description or "—",
        )
        for line in lines
    ]
    return _table(["at", "account", "type", "state", "amount", "description"], rows, empty, "")
