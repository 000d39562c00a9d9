"""Back office for card transactions: authorizations and merchant returns, read-only.

Both are written only by the card network's requests (`authorization_create`,
`authorization_present`, `authorization_reverse`, the expiry job, `card_return_create`); staff
look at them here and nothing is added, changed or deleted (an authorization's hold is moved
only through its authorization, never through a form or the hold's own actions).

A card is shown by its masked PAN only (first six and last four digits); the card's secret
columns are never loaded (`backoffice.admin.cards.SECRET_FIELDS`). An authorization's page
links its card, account, hold, statement line, returns and events; a return's page its card,
account, authorization, journal, statement line and events. Amounts are minor units shown with
their currency (`money`).
"""

from django.contrib import admin
from django.db.models import Q

from accounts.models import StatementLine
from api.names import api_data
from authorizations.models import Authorization, AuthorizationIncrement, CardReturn
from backoffice.admin.cards import SECRET_FIELDS, masked_pan_link
from backoffice.kit import (
    ReadOnlyModelAdmin,
    actor_display,
    admin_link,
    changelist_link,
    fields_display,
    link_column,
    metadata_display,
    money_column,
)
from backoffice.names import (
    TRANSACTION_TYPES,
    country_name,
    mcc_name,
    type_display,
    words_filter,
)
from events.models import Event

# A card payment's types, in words.
PAYMENT_TYPES = {code: TRANSACTION_TYPES[code] for code in Authorization.Type.values}
_CARD_SECRETS = [f"card__{name}" for name in SECRET_FIELDS]


@admin.display(description="decline details")
def decline_details_column(model_admin, obj):
    """A declined authorization's or increment's details, in the API's names, as fields
    (amounts with `money`, in the payment's currency)."""
    if obj.decline_details is None:
        return "—"
    currency = obj.currency if isinstance(obj, Authorization) else obj.authorization.currency
    return fields_display(api_data(obj.decline_details, stored=False), currency=currency)


@admin.display(description="program's answer")
def program_answer_column(model_admin, obj):
    """The program's own answer, as it sent it (its names, not the domain's), as fields: a
    partial approval's `amount` with `money`, in the payment's currency."""
    if obj.program_answer is None:
        return "—"
    currency = obj.currency if isinstance(obj, Authorization) else obj.authorization.currency
    return fields_display(obj.program_answer, currency=currency)


class IdOrMerchantSearchMixin:
    """An exact id (one index lookup), or part of the merchant's name."""

    search_help_text = "An exact id, or part of the merchant's name."

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(Q(id=term) | Q(merchant_name__icontains=term)), False


class CardTransactionAdmin(IdOrMerchantSearchMixin, ReadOnlyModelAdmin):
    """What authorizations and returns show alike."""

    search_fields = ["id", "merchant_name"]  # see IdOrMerchantSearchMixin

    def get_queryset(self, request):
        # The card's secrets stay in the database: only its masked PAN is shown.
        return super().get_queryset(request).defer(*_CARD_SECRETS)

    @admin.display(description="card (masked PAN)", ordering="card_id")
    def card_link(self, obj):
        return masked_pan_link(obj.card)

    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column("amount", description="amount", ordering="amount")

    @admin.display(description="merchant", ordering="merchant_name")
    def merchant_display(self, obj):
        return obj.merchant_name

    @admin.display(description="merchant category", ordering="merchant_mcc")
    def mcc_display(self, obj):
        return mcc_name(obj.merchant_mcc)

    @admin.display(description="country", ordering="merchant_country")
    def country_display(self, obj):
        return country_name(obj.merchant_country)

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")

    @admin.display(description="events")
    def events_link(self, obj):
        return changelist_link(Event, "Events of this object", object_id=obj.pk)

    def _statement_line_link(self, **filters):
        line = StatementLine.objects.filter(**filters).only("id").first()
        return admin_link(line, line.pk) if line is not None else "—"


@admin.register(Authorization)
class AuthorizationAdmin(CardTransactionAdmin):
    list_display = [
        "id",
        "card_link",
        "amount_display",
        type_display,
        "merchant_display",
        "channel",
        "decision",
        "status_display",
        "decline_code",
        "created_at",
    ]
    list_filter = [
        "decision",
        "decided_by",
        "kind",
        words_filter("type", PAYMENT_TYPES, "type"),
        "channel",
        "decline_code",
    ]
    list_select_related = ["card", "hold"]
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "card_link",
        "account_link",
        type_display,
        "amount_display",
        "merchant_display",
        "mcc_display",
        "country_display",
        "channel",
        "pin_given",
        "decision",
        "status_display",
        "decline_code",
        "decline_reason",
        "decline_details_display",
        "kind",
        "overdrawn_by_display",
        "decided_by",
        "decided_at",
        "requested_amount_display",
        "increments_link",
        "decisioning_endpoint",
        "program_mode",
        "program_latency_ms",
        "program_status",
        "program_error",
        "program_answer_display",
        metadata_display,
        "hold_link",
        "statement_line_link",
        "presented_amount_display",
        "presented_at",
        "spend_day",
        "returns_link",
        "events_link",
        "created_by",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related(
                "card", "hold", "account", "institution", "created_by_user", "created_by_api_key"
            )
        )

    @admin.display(description="status")
    def status_display(self, obj):
        return obj.status

    decline_details_display = decline_details_column

    requested_amount_display = money_column(
        "requested_amount", description="requested amount (a partial approval)"
    )

    program_answer_display = program_answer_column

    hold_link = link_column("hold", description="hold")

    overdrawn_by_display = money_column(
        "overdrawn_by", description="overdrew the account by (an advice or a force post)"
    )

    @admin.display(description="increments")
    def increments_link(self, obj):
        count = AuthorizationIncrement.objects.filter(authorization=obj).count()
        return changelist_link(
            AuthorizationIncrement, f"{count} increment(s)", authorization=obj.pk
        )

    @admin.display(description="statement line")
    def statement_line_link(self, obj):
        return self._statement_line_link(authorization=obj.pk)

    presented_amount_display = money_column("presented_amount", description="presented amount")

    @admin.display(description="returns")
    def returns_link(self, obj):
        count = CardReturn.objects.filter(authorization=obj).count()
        return changelist_link(CardReturn, f"{count} return(s)", authorization=obj.pk)


@admin.register(CardReturn)
class CardReturnAdmin(CardTransactionAdmin):
    list_display = [
        "id",
        "card_link",
        "amount_display",
        "merchant_display",
        "mcc_display",
        "country_display",
        "channel",
        "authorization_link",
        "created_at",
    ]
    list_filter = ["channel"]
    list_select_related = ["card", "authorization"]
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "card_link",
        "account_link",
        "authorization_link",
        "amount_display",
        "merchant_display",
        "mcc_display",
        "country_display",
        "channel",
        "journal_link",
        "statement_line_link",
        "events_link",
        "created_by",
        "created_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related(
                "card",
                "account",
                "authorization",
                "journal",
                "institution",
                "created_by_user",
                "created_by_api_key",
            )
        )

    @admin.display(description="authorization", ordering="authorization_id")
    def authorization_link(self, obj):
        if obj.authorization_id is None:
            return "— (standalone)"
        return admin_link(obj.authorization, obj.authorization_id)

    journal_link = link_column("journal", description="journal")

    @admin.display(description="statement line")
    def statement_line_link(self, obj):
        return self._statement_line_link(card_return=obj.pk)


@admin.register(AuthorizationIncrement)
class AuthorizationIncrementAdmin(ReadOnlyModelAdmin):
    list_display = [
        "id",
        "authorization_link",
        "amount_display",
        "decision",
        "decided_by",
        "decline_code",
        "created_at",
    ]
    list_filter = ["decision", "decided_by", "decline_code"]
    list_select_related = ["authorization"]
    search_fields = ["id", "authorization__id"]
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "authorization_link",
        "amount_display",
        "decision",
        "decline_code",
        "decline_reason",
        "decline_details_display",
        "decided_by",
        "decided_at",
        "decisioning_endpoint",
        "program_mode",
        "program_latency_ms",
        "program_status",
        "program_error",
        "program_answer_display",
        "hold_link",
        "created_by",
        "created_at",
    ]
    readonly_fields = fields

    authorization_link = link_column("authorization", description="authorization")
    amount_display = money_column("amount", currency="authorization.currency", description="amount")
    hold_link = link_column("hold", description="hold of the new total")
    program_answer_display = program_answer_column

    decline_details_display = decline_details_column

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")
