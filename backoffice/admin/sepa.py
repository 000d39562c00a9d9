"""Back office for SEPA's standing arrangements (docs/payments.md, "The back office"): each
institution's SEPA profile (set by the operators' `manage.py sepa_profile`), the direct debit
mandates its customers' debtors signed (made, amended and cancelled through the API), and the
debtor register: what a customer told TX of other creditors' direct debits from its accounts
(the mandates it gave and the creditors it blocks, made and cancelled through the API). All are
read-only here. An IBAN is shown by its last four only, as on the external accounts' pages; the
register names the customer's account by its id, never its IBAN.
"""

from django.contrib import admin

from backoffice.kit import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    actor_display,
    link_column,
    metadata_display,
)
from core.money import money
from payments.models import BlockedCreditor, DebtorMandate, Mandate, SepaProfile

MASK = "•••• "
RAIL_CURRENCY = "EUR"  # SEPA moves euros only


@admin.register(SepaProfile)
class SepaProfileAdmin(ReadOnlyModelAdmin):
    """Set by the operators (`manage.py sepa_profile`): shown here."""

    list_display = ["institution", "kind", "bic", "credit_transfer_cutoff", "direct_debit_cutoff"]
    fields = [
        "institution",
        "kind",
        "bic",
        "settlement_iban_display",
        "creditor_identifier",
        "credit_transfer_cutoff",
        "direct_debit_cutoff",
        "require_verified",
        "approval_above_display",
        "pre_notification_days",
        "debit_hold_days",
        "iban_country",
        "iban_bank_code",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description="settlement IBAN")
    def settlement_iban_display(self, obj):
        return f"{MASK}{obj.settlement_iban[-4:]}" if obj.settlement_iban else "-"

    @admin.display(description="orders above this wait for a staff user")
    def approval_above_display(self, obj):
        return "-" if obj.approval_above is None else money(obj.approval_above, RAIL_CURRENCY)


@admin.register(Mandate)
class MandateAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A debtor's authorization to collect from their SEPA account: its debtor account (an
    external account, by its last four), scheme, type and state, and an amendment not yet
    carried to the debtor's bank."""

    list_display = [
        "id",
        "reference",
        "debtor_link",
        "scheme",
        "type",
        "status",
        "signature_date",
    ]
    list_filter = ["status", "scheme", "type", "institution"]
    list_select_related = ["external_account"]
    search_fields = ["id", "external_account_id"]
    search_help_text = "An exact mandate id or debtor (external) account id."
    fields = [
        "id",
        "institution",
        "reference",
        "debtor_link",
        "debtor_iban_display",
        "scheme",
        "type",
        "status",
        "signature_date",
        "cancelled_at",
        "cancelled_reason",
        "original_reference",
        "original_debtor_display",
        "amended_at",
        metadata_display,
        "created_by_display",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    debtor_link = link_column("external_account", description="debtor account")

    @admin.display(description="debtor IBAN")
    def debtor_iban_display(self, obj):
        return f"{MASK}{obj.external_account.number_last4}"

    @admin.display(description="debtor account before the amendment")
    def original_debtor_display(self, obj):
        original = obj.original_external_account
        return "-" if original is None else f"{MASK}{original.number_last4}"

    @admin.display(description="made by")
    def created_by_display(self, obj):
        return actor_display(obj, "created_by")


@admin.register(DebtorMandate)
class DebtorMandateAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A mandate the account's customer gave another bank's creditor: a collection the clearing
    presents is paid only under an active one (MD01 otherwise)."""

    list_display = [
        "id",
        "account_link",
        "creditor_identifier",
        "mandate_reference",
        "status",
        "created_at",
        "cancelled_at",
    ]
    list_filter = ["status", "institution"]
    list_select_related = ["account"]
    search_fields = ["id", "account_id"]
    search_help_text = "An exact debtor mandate id or account id."
    fields = [
        "id",
        "institution",
        "account_link",
        "creditor_identifier",
        "mandate_reference",
        "status",
        "cancelled_at",
        "cancelled_reason",
        "created_by_display",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")

    @admin.display(description="made by")
    def created_by_display(self, obj):
        return actor_display(obj, "created_by")


@admin.register(BlockedCreditor)
class BlockedCreditorAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A creditor the account's customer forbids to collect from it: its collections are
    rejected SL01, mandate or not, while the block is active."""

    list_display = [
        "id",
        "account_link",
        "creditor_identifier",
        "status",
        "created_at",
        "cancelled_at",
    ]
    list_filter = ["status", "institution"]
    list_select_related = ["account"]
    search_fields = ["id", "account_id"]
    search_help_text = "An exact blocked creditor id or account id."
    fields = [
        "id",
        "institution",
        "account_link",
        "creditor_identifier",
        "status",
        "cancelled_at",
        "cancelled_reason",
        "created_by_display",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")

    @admin.display(description="made by")
    def created_by_display(self, obj):
        return actor_display(obj, "created_by")
