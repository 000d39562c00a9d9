"""Back office for tenants and their access: institutions, their holidays, API keys, allowlists.

Every write goes through `institutions.services`, as the management commands' do (docs/design.md
sections 2 and 10), declared in `backoffice.actions.institutions` (its actions and its forms'
writes): creating an institution seeds its account products, creating or rotating a key shows its
secret once, revoking records who revoked it, allowlist edits are normalized CIDRs. Rows the
services never change (an existing key's prefix and hash) are read-only here; a key's scopes change
through `api_key_set_scopes`. Nothing is deleted: a key is revoked instead, an institution is never
removed. Holidays are the exception: one added by mistake is removed (`holiday_remove`), by a staff
user with the model's delete permission, for the institutions they work on; and so are a staff
user's institutions, granted and taken away by a superuser (`institution_access_grant`,
`institution_access_remove`).

Each staff action leaves a `LogEntry` (who, when, what); its message names the action and the public
key id or prefix, never a secret. A new secret (a key added or rotated here) is shown once, on a
page of its own answering the POST that made it (`Cache-Control: no-store`); it never goes into the
messages framework, its cookie or the session, nor into any table."""

from django import forms
from django.contrib import admin
from django.utils import timezone

from backoffice.actions.forms import DeclaredForms
from backoffice.actions.institutions import (
    add_api_key,
    add_holiday,
    add_institution,
    allowlist,
    change_scopes,
    grant_institution,
    remove_holiday,
    remove_institution_access,
    revoke_keys,
    rotate_keys,
    rotate_keys_now,
    secrets_page,
)
from backoffice.kit import ModelAdmin, admin_link, changelist_link, link_column
from core.exceptions import ValidationFailed
from institutions import scopes as api_scopes
from institutions.models import (
    AllowedNetwork,
    ApiKey,
    Holiday,
    Institution,
    InstitutionAccess,
    default_weekend_days,
)
from institutions.services import (
    normalize_cidr,
    validate_currency,
    validate_scopes,
    validate_time_zone,
    validate_weekend_days,
)


# --- Institutions ---------------------------------------------------------------------------
class InstitutionCreateForm(forms.ModelForm):
    class Meta:
        model = Institution
        fields = ["name", "currency", "time_zone", "weekend_days"]

    def clean_name(self):
        return self.cleaned_data["name"].strip()

    def clean_currency(self):
        currency = self.cleaned_data["currency"].strip().upper()
        try:
            return validate_currency(currency)
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "time_zone" not in self.fields:  # the change page: every field is read-only
            return
        self.fields["time_zone"].required = False
        self.fields["time_zone"].help_text = (
            "IANA name (e.g. Europe/Berlin): the calendar card limits count days and months "
            "in. Empty: UTC. Cannot be changed later."
        )
        self.fields["weekend_days"].required = False
        self.fields["weekend_days"].help_text = (
            "ISO weekday numbers, comma-separated (1 Monday .. 7 Sunday): the days that are no "
            "business day each week (docs/calendar.md). Empty: 6,7 (Saturday, Sunday). Cannot "
            "be changed later."
        )

    def clean_weekend_days(self):
        days = self.cleaned_data["weekend_days"]
        try:
            return validate_weekend_days(days or default_weekend_days())
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_time_zone(self):
        try:
            return validate_time_zone(self.cleaned_data["time_zone"].strip() or "UTC")
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None


@admin.register(Institution)
class InstitutionAdmin(DeclaredForms, ModelAdmin):
    """Created through `institution_create` (so it gets its account products); then read-only:
    there is no service that renames an institution or changes its currency."""

    form = InstitutionCreateForm
    add_write = add_institution
    list_display = ["name", "id", "currency", "time_zone", "created_at"]
    search_fields = ["name", "id"]
    list_filter = ["currency"]
    readonly_fields = [
        "id",
        "name",
        "currency",
        "time_zone",
        "weekend_days",
        "created_at",
        "holidays_link",
        "account_products_link",
        "api_keys_link",
        "customers_link",
    ]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["name", "currency", "time_zone", "weekend_days"]
        return self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Holidays")
    def holidays_link(self, obj):
        return changelist_link(Holiday, str(obj.holidays.count()), institution__id__exact=obj.pk)

    @admin.display(description="Account products")
    def account_products_link(self, obj):
        return changelist_link(
            "accounts.AccountProduct",
            str(obj.account_products.count()),
            institution__id__exact=obj.pk,
        )

    @admin.display(description="API keys")
    def api_keys_link(self, obj):
        return changelist_link(ApiKey, str(obj.api_keys.count()), institution__id__exact=obj.pk)

    @admin.display(description="Customers")
    def customers_link(self, obj):
        return changelist_link(
            "customers.Customer", str(obj.customers.count()), institution__id__exact=obj.pk
        )


# --- Holidays (docs/calendar.md) -------------------------------------------------------------
HOLIDAY_FIELDS = ["institution", "date", "name"]


class HolidayForm(forms.ModelForm):
    class Meta:
        model = Holiday
        fields = HOLIDAY_FIELDS


@admin.register(Holiday)
class HolidayAdmin(DeclaredForms, ModelAdmin):
    """Added through `holiday_add` (a date that is one already is refused on the form), removed
    through `holiday_remove`; never edited: a holiday with the wrong date or name is removed and
    added again. The institution limit holds: a staff user sees, adds and removes the holidays
    of the institutions they work on, with the model's add and delete permissions (no role has
    them: docs/back-office.md)."""

    form = HolidayForm
    add_write = add_holiday
    delete_write = remove_holiday
    list_display = ["date", "name", "weekday", "institution", "created_at"]
    list_filter = ["institution"]
    date_hierarchy = "date"
    search_fields = ["name"]
    ordering = ["institution", "date"]

    def get_fields(self, request, obj=None):
        return HOLIDAY_FIELDS if obj is None else [*HOLIDAY_FIELDS, "created_at"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else [*HOLIDAY_FIELDS, "created_at"]

    def has_change_permission(self, request, obj=None):
        # The change page is view-only (a stale form never rewrites a holiday).
        return obj is None and super().has_change_permission(request)

    @admin.display(description="Weekday")
    def weekday(self, obj):
        return obj.date.strftime("%A")

    def get_actions(self, request):
        # One holiday at a time, from its own page: no bulk removal.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


# --- API keys and their allowlists ----------------------------------------------------------
def _cidr_error(exc: ValidationFailed) -> forms.ValidationError:
    return forms.ValidationError(exc.message, code="invalid_cidr")


SCOPE_CHOICES = [(scope, scope) for scope in api_scopes.ALL]
SCOPES_HELP = (
    "full = every scope but network and cards:sensitive; readonly = read; network = read, "
    "network. cards:sensitive: full card numbers and CVVs (details, lookups, PAN transfers and "
    "authorizations); network: plays the card network (authorizations, presentments, returns). "
    "docs/tenancy-and-keys.md lists the scope of every operation."
)


def _validated_scopes(role, scopes) -> list[str]:
    try:
        return validate_scopes(role=role or None, scopes=scopes)
    except ValidationFailed as exc:
        raise forms.ValidationError(exc.message) from None


class ApiKeyCreateForm(forms.ModelForm):
    role = forms.ChoiceField(
        choices=[("", "— none: only the scopes ticked below —")]
        + [(role, f"{role}: {', '.join(scopes)}") for role, scopes in api_scopes.ROLES.items()],
        required=False,
        help_text="A preset; the scopes ticked below are added to it.",
    )
    scopes = forms.MultipleChoiceField(
        choices=SCOPE_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=SCOPES_HELP,
    )
    networks = forms.CharField(
        label="Allowed networks",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 40}),
        help_text=(
            "One IPv4/IPv6 address or CIDR range per line, e.g. 203.0.113.0/24. At least one: "
            "a key is usable from nowhere else."
        ),
    )

    class Meta:
        model = ApiKey
        fields = ["institution", "name", "scopes", "expires_at"]

    def clean_networks(self):
        networks, errors = set(), []
        for line in self.cleaned_data["networks"].splitlines():
            if not line.strip():
                continue
            try:
                networks.add(normalize_cidr(line))
            except ValidationFailed as exc:
                errors.append(_cidr_error(exc))
        if errors:
            raise forms.ValidationError(errors)
        if not networks:
            raise forms.ValidationError("Give at least one address or CIDR range.")
        return sorted(networks)

    def clean(self):
        cleaned = super().clean()
        if "scopes" in cleaned and "role" in cleaned:
            try:
                _validated_scopes(cleaned["role"], cleaned["scopes"])
            except forms.ValidationError as error:
                self.add_error("scopes", error)
        return cleaned

    def clean_expires_at(self):
        expires_at = self.cleaned_data.get("expires_at")
        if expires_at is not None and expires_at <= timezone.now():
            raise forms.ValidationError("Must be in the future.")
        return expires_at


class ApiKeyScopesForm(forms.ModelForm):
    """An existing key's page: its scopes are the one field staff may change."""

    scopes = forms.MultipleChoiceField(
        choices=SCOPE_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        help_text=SCOPES_HELP + " At least one; applies from the key's next request.",
    )

    class Meta:
        model = ApiKey
        fields = ["scopes"]

    def clean_scopes(self):
        return _validated_scopes(None, self.cleaned_data["scopes"])


class AllowedNetworkForm(forms.ModelForm):
    class Meta:
        model = AllowedNetwork
        fields = ["cidr"]
        labels = {"cidr": "CIDR"}

    def clean_cidr(self):
        try:
            return normalize_cidr(self.cleaned_data["cidr"])
        except ValidationFailed as exc:
            raise _cidr_error(exc) from None


class AllowedNetworkInline(admin.TabularInline):
    """Saved through `allowlist_add` / `allowlist_remove` (`backoffice.actions.institutions.
    allowlist`)."""

    model = AllowedNetwork
    form = AllowedNetworkForm
    fields = ["cidr", "added_at"]
    readonly_fields = ["added_at"]
    extra = 1
    verbose_name = "allowed network"
    verbose_name_plural = "IP allowlist (a key with no network is usable from nowhere)"

    @admin.display(description="added")
    def added_at(self, obj):
        return obj.created_at if obj.pk else "—"


class ApiKeyStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("active", "Active"), ("revoked", "Revoked"), ("expired", "Expired")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True).exclude(expires_at__lte=now)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(DeclaredForms, ModelAdmin):
    """Keys are created by `api_key_create` and never shown again; `secret_hash` is never shown.

    An existing key's scopes are edited through `api_key_set_scopes` (a revoked key's are
    final); its other fields are read-only (no service edits them); its allowlist is edited
    inline; it is revoked or rotated with the changelist actions, never deleted.
    """

    list_display = [
        "prefix",
        "institution",
        "name",
        "scopes_display",
        "status_display",
        "created_at",
        "expires_at",
    ]
    list_filter = [ApiKeyStatusFilter, "institution"]
    list_select_related = ["institution"]
    search_fields = ["prefix", "id", "name", "institution__name"]
    actions = [revoke_keys, rotate_keys, rotate_keys_now]
    add_write = add_api_key
    change_write = change_scopes
    inline_writes = (allowlist,)
    detail_fields = [
        "id",
        "institution",
        "name",
        "prefix",
        "scopes_display",
        "status_display",
        "created_at",
        "created_by",
        "expires_at",
        "revoked_at",
        "revoked_by",
        "replaced_by_link",
        "replaces_link",
    ]

    # -- pages
    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
        elif self._scopes_editable(request, obj):
            kwargs["form"] = ApiKeyScopesForm
        # else the plain ModelForm: every field is read-only (a declared field would not be)
        return super().get_form(request, obj, change=change, **kwargs)

    def _scopes_editable(self, request, obj) -> bool:
        return obj.revoked_at is None and self.has_change_permission(request, obj)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["institution", "name", "role", "scopes", "networks", "expires_at"]
        if self._scopes_editable(request, obj):
            # The checkboxes take the place of the read-only list.
            return [("scopes" if f == "scopes_display" else f) for f in self.detail_fields]
        return self.detail_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.detail_fields

    def get_inlines(self, request, obj):
        return [AllowedNetworkInline] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="scopes")
    def scopes_display(self, obj):
        return ", ".join(obj.scopes) or "—"

    @admin.display(description="status")
    def status_display(self, obj):
        return obj.status

    replaced_by_link = link_column("replaced_by", description="replaced by")

    @admin.display(description="replaces")
    def replaces_link(self, obj):
        return admin_link(ApiKey.objects.filter(replaced_by=obj).first())

    # -- writes: declared (backoffice.actions.institutions)
    def construct_change_message(self, request, form, formsets, add=False):
        # Scope changes have their own entry (`change_scopes`), with before and after.
        if not add and "scopes" in form.changed_data:
            form.changed_data.remove("scopes")
        return super().construct_change_message(request, form, formsets, add)

    def response_add(self, request, obj, post_url_continue=None):
        issued = getattr(request, "_tx_issued_keys", [])
        request._tx_issued_keys = []
        return secrets_page(self, request, issued, title="New API key: copy it now")


@admin.register(InstitutionAccess)
class InstitutionAccessAdmin(DeclaredForms, ModelAdmin):
    """Which institutions a staff user may work on in the back office (docs/back-office.md).

    A grant is added or removed here, never changed (remove it and add another); the admin's
    history says who granted or removed what, and when. A staff user with no grant sees no
    institution's rows unless given the permission "work on all institutions".
    """

    list_display = ["user", "institution", "created_at"]
    list_filter = ["institution"]
    list_select_related = ["user", "institution"]
    search_fields = ["user__username", "institution__name"]
    fields = ["user", "institution"]
    add_write = grant_institution
    delete_write = remove_institution_access

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request)

    def get_actions(self, request):
        # One grant at a time, from its own page: no bulk removal.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = db_field.related_model._default_manager.filter(
                is_staff=True, is_superuser=False
            ).order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
