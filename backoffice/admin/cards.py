"""Back office for cards: products, cards and the audit trail of sensitive-details reads.

Staff look at cards and change them only through the actions declared in `backoffice.actions.cards`
("Activate", "Suspend", "Close"; "Unblock the PIN" and "Change the limits" with four eyes;
"Freeze", "Unfreeze" and "Block" as lost or stolen, which every role may run), which
call the services as the API does (docs/design.md section 10). Nothing is added or deleted here and
no change form ever saves a card: a form saving a whole row could overwrite what a service wrote
under its lock (limits, PIN tries, status).

Card secrets never reach a page: the full PAN, the CVV and the PIN are not shown, their ciphertexts,
the PAN fingerprint and the PIN hash are neither shown nor searchable, and the admin's pages do not
even read those columns (`SECRET_FIELDS` are deferred; only the services the actions call load whole
cards). A card is shown by its masked PAN (first six and last four digits, which are not secret) and
found by its id, the last four digits or the embossed name. Staff add and change card products
through the products' services (docs/products.md); sensitive-details accesses, PIN unblocks and
failed PAN resolutions (card-number guessing, `cards.services.pan_guard`) are read-only lists."""

from django import forms
from django.contrib import admin
from django.db.models import BooleanField, ExpressionWrapper, Q

from backoffice.actions.cards import (
    activate_cards,
    add_card_product,
    block_cards,
    change_card_product,
    change_limits,
    close_cards,
    freeze_cards,
    suspend_cards,
    unblock_pins,
    unfreeze_cards,
)
from backoffice.actions.forms import DeclaredForms
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    ServiceFormModelAdmin,
    actor_display,
    admin_link,
    changelist_link,
    customer_column,
    link_column,
    metadata_display,
    money_column,
)
from backoffice.names import countries_text, mccs_text
from cards.models import Card, CardProduct, PanResolutionFailure, PinUnblock, SensitiveDetailsAccess
from cards.services import card_usage
from cards.services.products import LIMIT_FIELDS as PRODUCT_LIMIT_FIELDS
from cards.services.products import SWITCH_FIELDS, card_product_errors
from core.money import money
from events.models import Event

# Columns the admin never loads, shows, searches or offers in a form.
SECRET_FIELDS = ["pan_encrypted", "cvv_encrypted", "pan_fingerprint", "pin_hash"]


def masked_pan_link(card: Card | None):
    return admin_link(card, card.masked_pan) if card is not None else "—"


def card_without_secrets(**filters) -> Card | None:
    """A related card (primary, predecessor, successor), loaded without its secret columns."""
    return Card.objects.defer(*SECRET_FIELDS).filter(**filters).first()


# --- Card products --------------------------------------------------------------------------
PRODUCT_SECURITY_FIELDS = [*SWITCH_FIELDS, "default_blocked_mccs", "default_blocked_countries"]
# The fee schedule (docs/fees.md).
PRODUCT_FEE_FIELDS = ["atm_fee", "replacement_fee", "foreign_transaction_fee_bps"]
CARD_PRODUCT_CREATE_FIELDS = [
    "code",
    "name",
    "kind",
    "forms",
    "bin",
    "pan_length",
    "validity_months",
    *PRODUCT_LIMIT_FIELDS,
    *PRODUCT_SECURITY_FIELDS,
    *PRODUCT_FEE_FIELDS,
    "dispute_policy",
    "dispute_provisional_credit",
]
CARD_PRODUCT_CHANGE_FIELDS = [
    "name",
    "forms",
    "validity_months",
    *PRODUCT_LIMIT_FIELDS,
    *PRODUCT_SECURITY_FIELDS,
    *PRODUCT_FEE_FIELDS,
    "dispute_policy",
    "dispute_provisional_credit",
    "status",
]


class CardProductForm(forms.ModelForm):
    """The rules are the services' (`card_product_errors`), shown field by field. Lists of
    codes are comma-separated."""

    code = forms.CharField(
        required=False, max_length=64, help_text="Optional (default: the product's id)."
    )
    # The fee schedule (docs/fees.md), before `forms` (the field) hides the module.
    atm_fee = forms.IntegerField(
        required=False,
        help_text="Per ATM withdrawal, minor units of the card's account currency; blank or 0: "
        "none (docs/fees.md).",
    )
    replacement_fee = forms.IntegerField(
        required=False, help_text="Per card replaced, minor units; blank or 0: none."
    )
    foreign_transaction_fee_bps = forms.IntegerField(
        required=False,
        help_text="Basis points (0 to 10000) of a payment abroad, rounded half up; blank or 0: "
        "none.",
    )
    dispute_policy = forms.ChoiceField(
        required=False,
        choices=[("", "—"), *CardProduct.DisputePolicy.choices],
        help_text="Whose clocks its cards' disputes run on; blank: none (docs/disputes.md).",
    )
    dispute_provisional_credit = forms.ChoiceField(
        required=False,
        choices=[("", "—"), *CardProduct.ProvisionalCredit.choices],
        help_text="When its cards' disputes credit the cardholder; blank: at submission.",
    )
    forms = forms.MultipleChoiceField(
        choices=CardProduct.Form.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = CardProduct
        fields = ["institution", *CARD_PRODUCT_CREATE_FIELDS, "status"]
        help_texts = {
            "bin": "6 or 8 digits, unique among the institution's card products. Fixed once made.",
            "default_blocked_mccs": "Merchant category codes, comma-separated.",
            "default_blocked_countries": "ISO 3166-1 numeric codes, comma-separated.",
        }

    def clean(self):
        cleaned = super().clean()
        for field in [*PRODUCT_FEE_FIELDS, "dispute_policy", "dispute_provisional_credit"]:
            if cleaned.get(field) in (None, "") and not self.instance._state.adding:
                cleaned[field] = getattr(self.instance, field)  # blank: left as it is
        if self.instance._state.adding:
            values = {
                field: cleaned[field]
                for field in CARD_PRODUCT_CREATE_FIELDS
                if cleaned.get(field) not in (None, "")
            }
            institution = cleaned.get("institution")
            if institution is None:
                return cleaned
            errors = card_product_errors(values, institution=institution)
        else:
            product = CardProduct.objects.select_related("institution").get(pk=self.instance.pk)
            values = {field: cleaned[field] for field in self.changed_data if field in cleaned}
            errors = card_product_errors(values, institution=product.institution, product=product)
        for field, message in errors.items():
            if field in self.fields and field not in self.errors:
                self.add_error(field, message)
        return cleaned

    def _post_clean(self):
        # The rules are the service's (clean); a blank code is the service's to fill in.
        if not self.cleaned_data.get("code") and "code" in self.fields:
            self.instance.code = self.instance.pk
        super()._post_clean()


@admin.register(CardProduct)
class CardProductAdmin(DeclaredForms, ServiceFormModelAdmin):
    """Staff add and change products through `card_product_create` and `card_product_update`,
    as the API's v2 does (`product.created`, `product.updated` name the staff user; the
    admin's `LogEntry` says who and when). Retire by setting the status. Code, kind, BIN and
    PAN length are fixed once made; products are never deleted (cards refer to them). A
    product has no currency (its cards take their account's): its default limits and fees are
    minor units of each card's account currency, shown in the list with `money` in the
    institution's currency (the one its products are made in), which the column says; the
    form takes the integers."""

    form = CardProductForm

    list_display = [
        "name",
        "institution",
        "kind",
        "forms_display",
        "bin",
        "status",
        "default_per_transaction_display",
        "default_daily_display",
        "default_monthly_display",
    ]
    list_filter = ["status", "kind", "institution"]
    list_select_related = ["institution"]
    search_fields = ["=id", "code", "name", "institution__name"]
    create_fields = CARD_PRODUCT_CREATE_FIELDS
    change_fields = CARD_PRODUCT_CHANGE_FIELDS
    add_write = add_card_product
    change_write = change_card_product
    detail_fields = [
        "id",
        "institution",
        "code",
        "kind",
        "bin",
        "pan_length",
        "cards_link",
        "created_at",
        "updated_at",
    ]

    @admin.display(description="forms")
    def forms_display(self, obj):
        return ", ".join(obj.forms) or "—"

    # In the institution's currency: a product has none of its own (the class's docstring).
    default_per_transaction_display = money_column(
        "default_per_transaction",
        currency="institution.currency",
        description="per transaction",
        ordering="default_per_transaction",
    )
    default_daily_display = money_column(
        "default_daily",
        currency="institution.currency",
        description="daily",
        ordering="default_daily",
    )
    default_monthly_display = money_column(
        "default_monthly",
        currency="institution.currency",
        description="monthly",
        ordering="default_monthly",
    )
    default_daily_cash_display = money_column(
        "default_daily_cash",
        currency="institution.currency",
        description="daily cash",
        ordering="default_daily_cash",
    )
    atm_fee_display = money_column(
        "atm_fee",
        currency="institution.currency",
        description="ATM fee",
        ordering="atm_fee",
    )
    replacement_fee_display = money_column(
        "replacement_fee",
        currency="institution.currency",
        description="replacement fee",
        ordering="replacement_fee",
    )

    @admin.display(description="cards")
    def cards_link(self, obj):
        return changelist_link(Card, "Cards of this product", product=obj.pk)


# --- Cards ----------------------------------------------------------------------------------
class ProductKindFilter(admin.SimpleListFilter):
    title = "product kind"
    parameter_name = "product_kind"

    def lookups(self, request, model_admin):
        return CardProduct.Kind.choices

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(product__kind=self.value())
        return queryset


@admin.register(Card)
class CardAdmin(ActionsOnlyModelAdmin):
    """Cards are issued through the API (`card_issue`); here they are reviewed and activated,
    suspended or closed through `card_set_status`."""

    list_display = [
        "id",
        "masked_pan",
        "status",
        "form",
        "product_link",
        "account_link",
        "customer_link",
        "expiry",
    ]
    list_filter = ["status", "form", ProductKindFilter, "institution"]
    list_select_related = ["product", "account", "customer"]
    search_fields = ["id", "pan_last4", "embossed_name"]
    search_help_text = (
        "An exact card id, the last four digits of the PAN, or part of the embossed name."
    )
    actions = [
        activate_cards,
        suspend_cards,
        close_cards,
        unblock_pins,
        change_limits,
        freeze_cards,
        unfreeze_cards,
        block_cards,
    ]
    exclude = SECRET_FIELDS
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "institution",
                    "masked_pan",
                    "status",
                    "status_reason",
                    "form",
                    "product_link",
                    "account_link",
                    "customer_link",
                    "embossed_name",
                    "expiry",
                    "risk_level",
                    "delivery_address_display",
                    "created_at",
                    "updated_at",
                ]
            },
        ),
        (
            "Controls",
            {
                "fields": [
                    "ecommerce",
                    "contactless",
                    "atm",
                    "international",
                    "magstripe",
                    "blocked_mccs_display",
                    "blocked_countries_display",
                ]
            },
        ),
        (
            "Limits",
            {
                "fields": [
                    "limit_per_transaction_display",
                    "limit_daily_display",
                    "limit_monthly_display",
                    "limit_daily_cash_display",
                    "usage_display",
                ]
            },
        ),
        (
            "PIN (only whether one is set: the PIN itself is never stored or shown)",
            {"fields": ["pin_status", "pin_failed_attempts", "pin_blocked", "pin_changed_at"]},
        ),
        (
            "Related cards",
            {
                "fields": [
                    "primary_card_link",
                    "supplementary_cards_link",
                    "predecessor_link",
                    "succession",
                    "successor_link",
                ]
            },
        ),
        ("Client metadata (set through the API)", {"fields": [metadata_display]}),
        ("Related lists", {"fields": ["accesses_link", "pin_unblocks_link", "events_link"]}),
    ]
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    def get_queryset(self, request):
        # The secrets stay in the database; only whether a PIN is set is read.
        return (
            super()
            .get_queryset(request)
            .defer(*SECRET_FIELDS)
            .annotate(
                has_pin=ExpressionWrapper(Q(pin_hash__isnull=False), output_field=BooleanField())
            )
        )

    def has_protect_permission(self, request, obj=None) -> bool:
        """Freeze, unfreeze, block lost or stolen (`permissions=("protect",)` of those actions):
        every staff role has `cards.protect_card`, support included (docs/back-office.md)."""
        return request.user.has_perm("cards.protect_card")

    def get_search_results(self, request, queryset, search_term):
        """An exact id or last four digits (indexed or short), or part of the embossed name.
        Never the full PAN: it is not stored in a searchable form."""
        term = search_term.strip()
        if not term:
            return queryset, False
        condition = Q(id=term) | Q(embossed_name__icontains=term)
        if len(term) == 4 and term.isdigit():
            condition |= Q(pan_last4=term)
        return queryset.filter(condition), False

    # -- columns and fields
    @admin.display(description="PAN (masked)")
    def masked_pan(self, obj):
        return obj.masked_pan

    @admin.display(description="product", ordering="product__name")
    def product_link(self, obj):
        return admin_link(obj.product, obj.product.name)

    account_link = link_column("account", description="account", ordering="account_id")
    customer_link = customer_column(ordering="customer_id")

    @admin.display(description="expiry", ordering="expires_on")
    def expiry(self, obj):
        return f"{obj.expiry_month:02d}/{obj.expiry_year}"

    @admin.display(description="delivery address")
    def delivery_address_display(self, obj):
        address = obj.delivery_address
        if address is None:
            return "—"
        return ", ".join(str(part) for part in address.values() if part)

    @admin.display(description="blocked MCCs")
    def blocked_mccs_display(self, obj):
        return mccs_text(obj.blocked_mccs)

    @admin.display(description="blocked countries")
    def blocked_countries_display(self, obj):
        return countries_text(obj.blocked_countries)

    limit_per_transaction_display = money_column(
        "limit_per_transaction", currency="account.currency", description="per transaction"
    )
    limit_daily_display = money_column(
        "limit_daily", currency="account.currency", description="daily"
    )
    limit_monthly_display = money_column(
        "limit_monthly", currency="account.currency", description="monthly"
    )
    limit_daily_cash_display = money_column(
        "limit_daily_cash", currency="account.currency", description="daily cash"
    )

    @admin.display(description="spent")
    def usage_display(self, obj):
        # Counted per day in the institution's time zone, over the card's lineage (a renewed or
        # replaced card continues its predecessor's count): what the limits are checked against.
        usage = card_usage(obj)
        currency = obj.account.currency
        return (
            f"today ({usage.day:%Y-%m-%d}) {money(usage.daily, currency)}, of which cash "
            f"{money(usage.daily_cash, currency)}; this month ({usage.month}) "
            f"{money(usage.monthly, currency)}"
        )

    @admin.display(description="PIN")
    def pin_status(self, obj):
        return "set" if obj.has_pin else "not set"

    @admin.display(description="primary card")
    def primary_card_link(self, obj):
        if obj.primary_card_id is None:
            return "—"
        return masked_pan_link(card_without_secrets(pk=obj.primary_card_id))

    @admin.display(description="supplementary cards")
    def supplementary_cards_link(self, obj):
        count = Card.objects.filter(primary_card=obj).count()
        if not count:
            return "—"
        return changelist_link(Card, f"{count} supplementary card(s)", primary_card=obj.pk)

    @admin.display(description="predecessor")
    def predecessor_link(self, obj):
        if obj.predecessor_id is None:
            return "—"
        return masked_pan_link(card_without_secrets(pk=obj.predecessor_id))

    @admin.display(description="successor")
    def successor_link(self, obj):
        return masked_pan_link(card_without_secrets(predecessor=obj.pk))

    @admin.display(description="sensitive-details reads")
    def accesses_link(self, obj):
        count = SensitiveDetailsAccess.objects.filter(card=obj).count()
        return changelist_link(SensitiveDetailsAccess, f"{count} read(s)", card=obj.pk)

    @admin.display(description="PIN unblocks")
    def pin_unblocks_link(self, obj):
        # Per chain: the cap counts the unblocks of the card's renewals and replacements too.
        count = PinUnblock.objects.filter(lineage_id=obj.lineage_root_id).count()
        return changelist_link(
            PinUnblock, f"{count} unblock(s) of this card chain", lineage=obj.lineage_root_id
        )

    @admin.display(description="events")
    def events_link(self, obj):
        return changelist_link(Event, "Events of this card", object_id=obj.pk)


# --- Sensitive-details accesses (the audit trail of PAN/CVV reads) --------------------------
@admin.register(SensitiveDetailsAccess)
class SensitiveDetailsAccessAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """Written only by `card_sensitive_details`, in the transaction of the read; never changed."""

    list_display = ["card_link", "accessed_by", "request_id", "client_ip", "accessed_at"]
    list_filter = ["institution"]
    search_fields = ["card_id", "request_id"]
    search_help_text = "An exact card id or request id."
    date_hierarchy = "accessed_at"
    fields = [
        "id",
        "institution",
        "card_link",
        "accessed_by",
        "request_id",
        "client_ip",
        "accessed_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("card", "api_key", "user")
            .defer(*(f"card__{name}" for name in SECRET_FIELDS))
        )

    @admin.display(description="card", ordering="card_id")
    def card_link(self, obj):
        return masked_pan_link(obj.card)

    @admin.display(description="by")
    def accessed_by(self, obj):
        if obj.api_key is not None:
            return f"API key {obj.api_key.prefix}"
        if obj.user is not None:
            return f"staff {obj.user.get_username()}"
        return "system"


# --- PIN unblocks and failed PAN resolutions (what stops guessing) ---------------------------
@admin.register(PinUnblock)
class PinUnblockAdmin(ReadOnlyModelAdmin):
    """Written only by `card_pin_unblock`: who unblocked which card's PIN, when and why."""

    institution_path = "card__institution"

    list_display = ["card_link", "unblocked_by", "reason", "created_at"]
    list_filter = ["card__institution"]
    search_fields = ["=card__id", "=lineage__id"]
    search_help_text = "An exact card id (or the first card of its chain)."
    date_hierarchy = "created_at"
    fields = ["id", "card_link", "lineage_link", "unblocked_by", "reason", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("card", "lineage", "unblocked_by_api_key", "unblocked_by_user")
            .defer(
                *(f"card__{name}" for name in SECRET_FIELDS),
                *(f"lineage__{name}" for name in SECRET_FIELDS),
            )
        )

    @admin.display(description="card", ordering="card_id")
    def card_link(self, obj):
        return masked_pan_link(obj.card)

    @admin.display(description="first card of the chain")
    def lineage_link(self, obj):
        return masked_pan_link(obj.lineage)

    @admin.display(description="by")
    def unblocked_by(self, obj):
        return actor_display(obj, "unblocked_by")


@admin.register(PanResolutionFailure)
class PanResolutionFailureAdmin(ReadOnlyModelAdmin):
    """Written only by `pan_failure_count`: one PAN an API key tried that no card of its
    institution holds, or a staff user searched for that no card they may see holds (the PAN
    is not kept). Rows older than the guessing window are deleted; a key or a staff user
    crossing the threshold also leaves a `security.pan_guessing_suspected` event (a staff
    user's: a staff event)."""

    list_display = ["api_key", "staff_user", "institution", "created_at"]
    list_filter = ["institution"]
    list_select_related = ["api_key", "staff_user", "institution"]
    search_fields = ["=api_key__id", "=api_key__prefix", "=staff_user__username"]
    search_help_text = "An exact API key id or prefix, or a staff username."
    date_hierarchy = "created_at"
    fields = ["id", "api_key", "staff_user", "institution", "created_at"]
    readonly_fields = fields
