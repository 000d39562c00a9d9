"""The toolkit every page of the back office is built with: links, money and detail columns,
confirmation pages, the reason form, read-only bases, exact-id search, who did it, and every
list's CSV export.

Rows that services write are changed in the back office only through declared actions that
call those services (`backoffice.actions`, docs/design.md section 10); these bases make every other
path read-only.

Every base here limits a staff user to the institutions they may work on (`InstitutionLimit`,
docs/back-office.md): lists, change pages, history, actions and the institution choices of
add forms all start from `get_queryset`, which keeps only those institutions' rows. Which
institutions a user may work on is the `institutions` app's to say (`institutions.staff`),
asked here directly: the back office stands above it.
"""

import json
import re
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import RelatedOnlyFieldListFilter, helpers
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme

from backoffice import exports
from backoffice.names import country_name, customer_detail_html, customer_name, mcc_name
from core.money import money
from core.text import has_card_or_account_number
from institutions.staff import staff_institutions as institutions_of


def admin_link(obj, text=None):
    if obj is None:
        return "—"
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text or str(obj))


def changelist_link(model, text: str, **filters):
    """A link to `model`'s changelist, filtered. `model` is a model class or its label
    ("transfers.Transfer"): a lower layer's admin names a higher layer's page by its label, so
    it does not import it (docs/architecture.md)."""
    if isinstance(model, str):
        app_label, _, model_name = model.partition(".")
    else:
        app_label, model_name = model._meta.app_label, model._meta.model_name
    url = reverse(f"admin:{app_label}_{model_name.lower()}_changelist")
    query = "&".join(f"{name}={value}" for name, value in filters.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, text)


def link_column(field: str, *, description: str, ordering: str | None = None):
    """An admin column linking to the row's related `field` (`admin_link`: its change page, "—"
    when there is none): `account_link = link_column("account", description="account",
    ordering="account_id")`."""

    @admin.display(description=description, ordering=ordering)
    def column(model_admin, obj):
        return admin_link(getattr(obj, field))

    return column


def customer_column(field: str = "customer", *, description: str = "customer", ordering=None):
    """An admin column linking to the row's customer by their name, with what tells them from
    another of the same name under it (`backoffice.names.customer_detail`; never their national
    id).
    The list selects the customer with its rows (`list_select_related`)."""

    @admin.display(description=description, ordering=ordering)
    def column(model_admin, obj):
        customer = getattr(obj, field)
        if customer is None:
            return "—"
        return format_html(
            "{}{}", admin_link(customer, customer_name(customer)), customer_detail_html(customer)
        )

    return column


def money_column(
    amount: str | Callable,
    *,
    currency: str = "currency",
    description: str,
    ordering: str | None = None,
):
    """An admin column (for `list_display`, `fields`, `readonly_fields`) showing an amount with
    its currency, as `core.money.money` writes it: `amount_display = money_column("amount",
    description="amount", ordering="amount")`.

    `amount` and `currency` name attributes of the row, dotted for a related row's
    (`currency="account.currency"`); `amount` may instead be a function of the row.
    """
    amount_of = amount if callable(amount) else attrgetter(amount)
    currency_of = attrgetter(currency)

    @money_cells(lambda obj: (amount_of(obj), currency_of(obj)))
    @admin.display(description=description, ordering=ordering)
    def column(model_admin, obj):
        return money(amount_of(obj), currency_of(obj))

    return column


def money_cells(of: Callable[[Any], tuple[int | None, str]]):
    """Marks a list column that shows an amount in words of its own (a statement line's state)
    as money for the CSV export (`backoffice.exports`): `of(row)` is its (amount in minor units,
    currency), written as two cells, the amount in major units and the currency. Every
    `money_column` is marked already."""

    def mark(column):
        column.money_of = of
        return column

    return mark


def masked_account_number(account) -> str:
    """An account number as the back office shows it: its last four digits only (the number is
    a sensitive identifier: never in a list, never searchable)."""
    number = account.account_number
    return f"•••• {number[-4:]}" if number else "—"


def pretty_json(value) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True))


# Keys (snake or camelCase) of stored details that are amounts in minor units: anything named
# "...amount", and these; with a currency beside them (or given) they are shown with `money`.
MONEY_KEYS = frozenset(
    {
        "available",
        "posted",
        "pending",
        "balance",
        "overdraft_limit",
        "network_overdraft",
        "overdrawn_by",
        "provisional_credit",
        "recovered",
        "cardholder_liable",
        "written_off",
        "monthly_fee",
        "held",  # a capture's or an increment's refusal: what the hold holds
        "maximum",
    }
)
# Amounts by context: a card limit's details (`{"limit": "daily", "value": ..., "used": ...}`)
# and a velocity rule's hit (`{"total": ..., "max_amount": ...}`).
LIMIT_KEYS = frozenset({"value", "used", "remaining"})


# Keys of stored details that are codes shown by name (`backoffice.names`): a merchant's
# category and country.
MCC_KEYS = frozenset({"mcc", "merchant_mcc"})
COUNTRY_KEYS = frozenset({"country_code", "country", "merchant_country"})


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _is_money(key: str, siblings: set[str]) -> bool:
    name = _snake(key)
    if name.endswith("amount") or name in MONEY_KEYS:
        return True
    if name in LIMIT_KEYS:
        return "limit" in siblings
    if name == "total":
        return "max_amount" in siblings
    return False


def _field_value(key: str, value, siblings: set[str], data: dict, currency: str | None):
    if isinstance(value, dict):
        return fields_display(value, currency=currency)
    if isinstance(value, list):
        if any(isinstance(item, dict) for item in value):
            return format_html_join("", "{}", ((fields_display(item, currency),) for item in value))
        return ", ".join(str(item) for item in value) or "—"
    if value is None:
        return "—"
    if isinstance(value, str) and _snake(key) in MCC_KEYS:
        return mcc_name(value)
    if isinstance(value, str) and _snake(key) in COUNTRY_KEYS:
        return country_name(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and _is_money(key, siblings):
        name = _snake(key)
        own = data.get("merchant_currency", data.get("merchantCurrency"))
        code = own if name == "merchant_amount" and own else currency
        if code:
            return money(value, code)
    return str(value)


def fields_display(data, currency: str | None = None):
    """Stored details (an alert's "why it hit", a decline's details, an event's data, a
    merchant) as staff read them: one row per field, a label and its value, amounts in minor
    units shown with `money` in the currency beside them (the data's own `currency`, else
    `currency`), nested objects as nested fields. Never the raw JSON: staff read "120.00 EUR",
    not `"amount": 12000` (docs/back-office.md, "Money and line states")."""
    if not data:
        return "—"
    if not isinstance(data, dict):
        return _field_value("", data, set(), {}, currency)
    siblings = {_snake(key) for key in data}
    currency = data.get("currency") if isinstance(data.get("currency"), str) else currency
    rows = (
        (
            _snake(key).replace("_", " "),
            _field_value(key, value, siblings, data, currency),
        )
        for key, value in data.items()
    )
    return format_html(
        '<table class="fields"><tbody>{}</tbody></table>',
        format_html_join("", '<tr><th scope="row">{}</th><td>{}</td></tr>', rows),
    )


@admin.display(description="metadata")
def metadata_display(obj) -> str:
    """A resource's client metadata (`core.metadata`), read-only, as pretty JSON: put this
    function itself in an admin's `fields` or `fieldsets` and its `readonly_fields`. The
    client's own strings, never a secret of ours; escaped like any text."""
    return pretty_json(obj.metadata) if obj.metadata else "—"


def confirmation_page(
    model_admin,
    request,
    *,
    template: str,
    title: str,
    form,
    action_name: str,
    confirm_name: str,
    objects: list,
    submit_label: str,
    **context,
) -> TemplateResponse:
    """The intermediate page of an action that asks for input before it changes anything
    (`admin/action_confirmation.html`, which `template` extends)."""
    return TemplateResponse(
        request,
        template,
        {
            **model_admin.admin_site.each_context(request),
            "title": title,
            "subtitle": None,
            "opts": model_admin.opts,
            "media": model_admin.media + form.media,
            "action_name": action_name,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "confirm_name": confirm_name,
            "objects": objects,
            "submit_label": submit_label,
            "form": form,
            **context,
        },
    )


# The confirmation page's submit marker: without it, an action only shows that page.
CONFIRM = "confirm"
MAX_REASON = 500


NUMBER_IN_TEXT = "Must not hold a card or account number: write its last four digits instead."


def no_card_or_account_number(text: str) -> None:
    """A form's validator of free text staff write (a note, a reason sent in an event): no
    card or account number in it (`core.text.has_card_or_account_number`)."""
    if has_card_or_account_number(text):
        raise forms.ValidationError(NUMBER_IN_TEXT, code="card_or_account_number")


def reason_field(help_text: str = "", max_length: int = MAX_REASON) -> forms.CharField:
    """A staff user's reason, as every admin form asks for it."""
    return forms.CharField(
        max_length=max_length,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=help_text,
    )


class ReasonForm(forms.Form):
    """The reason staff give on an action's confirmation page: required unless
    `required=False`; `help_text` says where it is kept; at most `max_length` characters; in
    the field `name` (an alert's resolution calls it its "note")."""

    def __init__(
        self,
        *args,
        required: bool = True,
        help_text: str = "",
        max_length: int = MAX_REASON,
        name: str = "reason",
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.fields[name] = reason_field(help_text, max_length)
        self.fields[name].required = required


# --- The institution limit -----------------------------------------------------------------
INSTITUTION_MODEL = "institutions.Institution"
# `InstitutionLimit.institution_path` until an admin names one: found from the model.
FROM_MODEL = object()


def staff_institutions(request):
    """None when `request.user` works on every institution, else the ids' queryset
    (`institutions.staff.staff_institutions`). Asked once per request."""
    user = request.user
    if user.is_superuser:
        return None
    if not hasattr(request, "_tx_staff_institutions"):
        request._tx_staff_institutions = institutions_of(user)
    return request._tx_staff_institutions


def institution_path_of(model) -> str | None:
    """How `model`'s rows reach their institution, when the model says it alone: the
    institution itself, or a foreign key named `institution`."""
    if model._meta.label == INSTITUTION_MODEL:
        return "pk"
    try:
        field = model._meta.get_field("institution")
    except FieldDoesNotExist:  # the admin names the path
        return None
    if field.is_relation and field.related_model._meta.label == INSTITUTION_MODEL:
        return "institution"
    return None


class InstitutionLimit:
    """Keeps a staff user to the rows of the institutions they may work on. `institution_path`
    is the lookup from a row to its institution ("account__institution"); by default the
    model's own `institution` key; None for a model that belongs to no institution."""

    institution_path: Any = FROM_MODEL  # a lookup, None, or FROM_MODEL

    def get_institution_path(self) -> str | None:
        if self.institution_path is FROM_MODEL:
            return institution_path_of(self.model)
        return self.institution_path

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        path = self.get_institution_path()
        allowed = staff_institutions(request) if path is not None else None
        if allowed is None:
            return queryset
        return queryset.filter(**{f"{path}__in": allowed})

    def has_add_permission(self, request, *args, **kwargs):
        # A new institution would be outside a limited user's institutions.
        if self.model._meta.label == INSTITUTION_MODEL and staff_institutions(request) is not None:
            return False
        return super().has_add_permission(request, *args, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # An add form's institution: only those the user may work on.
        if db_field.related_model._meta.label == INSTITUTION_MODEL:
            allowed = staff_institutions(request)
            if allowed is not None:
                kwargs["queryset"] = db_field.related_model._default_manager.filter(pk__in=allowed)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_list_filter(self, request):
        # The institution filter offers only the institutions of the rows the user sees.
        filters = super().get_list_filter(request)
        if staff_institutions(request) is None:
            return filters
        return [
            (name, RelatedOnlyFieldListFilter)
            if isinstance(name, str) and name.split("__")[-1] == "institution"
            else name
            for name in filters
        ]


class CsvExport:
    """Every list exports to CSV what it shows under its filters and search: an "Export to CSV"
    button on the list (`admin/change_list_object_tools.html`) links to `export.csv` beside
    it with the list's query string, for whoever may see the list (`backoffice.exports`:
    streamed, money in major units, formula-safe, audited)."""

    def get_urls(self):
        opts = self.model._meta
        export = path(
            "export.csv",
            self.admin_site.admin_view(self.export_view),
            name=f"{opts.app_label}_{opts.model_name}_export",
        )
        return [export, *super().get_urls()]

    def export_view(self, request):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return exports.export_list(self, request)

    def changelist_view(self, request, extra_context=None):
        opts = self.model._meta
        context = {"export_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_export")}
        return super().changelist_view(request, {**context, **(extra_context or {})})

    def get_changelist(self, request, **kwargs):
        changelist = super().get_changelist(request, **kwargs)
        return exports.uncounted(changelist) if exports.is_export(request) else changelist


class ModelAdmin(InstitutionLimit, CsvExport, admin.ModelAdmin):
    """The base of an admin that is none of the kinds below: the institution limit holds, and
    its list exports to CSV."""


class ReadOnlyModelAdmin(ModelAdmin):
    """Staff may look, nobody may add, change or delete (rows written only by services)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def actor_display(obj, prefix: str) -> str:
    """Who wrote a row stamped by `Actor.stamp(prefix)`: a staff user, an API key or the system."""
    user = getattr(obj, f"{prefix}_user")
    if user is not None:
        return f"staff {user.get_username()}"
    api_key = getattr(obj, f"{prefix}_api_key")
    if api_key is not None:
        return f"API key {api_key.prefix}"
    return "system"


class ServiceFormModelAdmin(ModelAdmin):
    """The pages of add and change forms that write through a domain's services, never
    `obj.save()` (their writes are declared: `backoffice.actions.forms.created` and
    `changed_fields` read `create_fields` and `change_fields` from here): the add form asks
    the institution and `create_fields`, the change form `change_fields`; `detail_fields` are
    shown read-only once made. Nothing is ever deleted."""

    create_fields: list[str] = []
    change_fields: list[str] = []
    detail_fields: list[str] = []

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["institution", *self.create_fields]
        return [*self.detail_fields, *self.change_fields]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.detail_fields

    def has_delete_permission(self, request, obj=None):
        return False


# The field a page's action button posts (and its confirmation page carries on): back to the
# row's page once the action ran.
RETURN_TO_OBJECT = "return_to_object"
# The field a button on another page of the back office posts (the customer page's card
# buttons): the path of that page, to go back to once the action ran.
RETURN_TO = "return_to"


def back_office_path(request, path: str) -> bool:
    """Whether `path` is a page of the back office on this host (a RETURN_TO), never another
    site: a path under the admin's own, with no scheme or host of its own."""
    return path.startswith(reverse("admin:index")) and url_has_allowed_host_and_scheme(
        path, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )


class ActionsOnlyModelAdmin(ModelAdmin):
    """Rows written only by services: staff view them and change them only through actions.

    No add, no delete; the change page is view-only (no form can save the row, so a stale copy
    never overwrites what a service wrote under its locks). Change permission on the model is
    what the actions require (`permissions=["change"]`).
    """

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request)

    # --- The row's actions as buttons on its page (docs/back-office.md, "Actions on a page")
    change_form_template = "admin/object_actions_change_form.html"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        """The page offers as a button each action the user may run that applies to this row
        now (a declaration's `applies_to`: its state, who asked for it): it posts to the
        changelist as ticking the row and picking the action would, so the action's own
        confirmation (and reason) and its refusals are the same; then back to this page."""
        if obj is not None:
            context["object_actions"] = [
                (name, str(description).replace("selected ", "", 1))
                for name, (action, name, description) in self.get_actions(request).items()
                if getattr(action, "applies_to", None) is None
                or action.applies_to(obj, request.user)
            ]
        return super().render_change_form(request, context, add, change, form_url, obj)

    def response_action(self, request, queryset):
        response = super().response_action(request, queryset)
        if response is None or response.status_code != 302:
            return response
        back_to = request.POST.get(RETURN_TO_OBJECT)
        if back_to:
            opts = self.model._meta
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[back_to])
            )
        page = request.POST.get(RETURN_TO, "")
        if page and back_office_path(request, page):
            return HttpResponseRedirect(page)
        return response


class ExactIdSearchMixin:
    """Search by exact ids (`search_fields` are plain field names): each term is one index
    lookup. Django's `=field` search compares UPPER(...) and cannot use the indexes. A term
    that cannot be a field of the row's value (a word for a numeric id) is not looked up in
    it."""

    search_help_text = "An exact id."

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        condition = Q()
        for name in self.search_fields:
            try:
                self.model._meta.get_field(name).to_python(term)
            except FieldDoesNotExist:
                pass  # a related row's field ("order__id"): looked up as it is
            except ValidationError:
                continue
            condition |= Q(**{name: term})
        return (queryset.filter(condition) if condition else queryset.none()), False


class ReadOnlyInline(admin.TabularInline):
    """Shown on a parent's page, never edited there. `recent` (with `fk_name` set): show only
    the newest rows (the parent's admin uses `RecentInlinesMixin`)."""

    extra = 0
    can_delete = False
    show_change_link = True
    recent: int | None = None

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RecentInlinesMixin:
    """Limit each `ReadOnlyInline` with `recent` to its newest rows (by id), in one query."""

    def get_formset_kwargs(self, request, obj, inline, prefix):
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if getattr(inline, "recent", None) and obj is not None and obj.pk is not None:
            queryset = kwargs["queryset"]
            newest = queryset.filter(**{inline.fk_name: obj}).order_by("-pk").values("pk")
            # IN (SELECT ... LIMIT n): the formset filters by the parent again, harmlessly.
            kwargs["queryset"] = queryset.filter(pk__in=newest[: inline.recent])
        return kwargs
