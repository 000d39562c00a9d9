"""Back office for reconciliation (docs/reconciliation.md, "The back office"): the bank's
statements, each with its lines; the expected payments, the reconciliation rules and the breaks
the runs found. A statement's page shows its proof now, as the API does (docs/reconciliation.md,
"The proof").

Read-only: a statement is written by `reconciliation.services.statements` only (the API's
`POST /bank-statements`), the rest by the API's writes and the runs; but the breaks, which are
cases (`CaseWork`: notes, assignment, the "mine" queue) and are resolved by the declared
actions of `backoffice.actions.reconciliation` (four eyes for the ones that book money). No page
shows an account number: the statement's bank account and a line's counterparty by their last
four. The file's bytes carry full numbers and are never shown here.
"""

from django.contrib import admin
from django.utils.html import format_html_join

from backoffice.actions.reconciliation import (
    assign_breaks,
    book_credit,
    book_fee,
    force_post,
    note_breaks,
    place_credit,
    resolve_without_money,
    take_breaks,
)
from backoffice.admin.cases import CaseWork
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    changelist_link,
    link_column,
    money_column,
)
from core.money import money
from reconciliation.models import (
    BankStatement,
    BankStatementLine,
    ExpectedPayment,
    ReconciliationBreak,
    ReconciliationRule,
)
from reconciliation.services.proof import statement_proof

MASK = "•••• "


def _masked(last4: str) -> str:
    return f"{MASK}{last4}" if last4 else "—"


@admin.register(BankStatement)
class BankStatementAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "format",
        "bank_statement_id",
        "bank_account_display",
        "period_display",
        "opening_display",
        "closing_display",
        "line_count",
    ]
    list_filter = ["format", "currency", "institution"]
    search_fields = ["id", "sha256", "bank_statement_id"]
    search_help_text = "An exact statement id, SHA-256 or the bank's statement id."
    fields = [
        "id",
        "institution",
        "account_link",
        "format",
        "name",
        "sha256",
        "bank_statement_id",
        "sequence",
        "bank_account_display",
        "currency",
        "period_start",
        "period_end",
        "opening_display",
        "closing_display",
        "proof_display",
        "line_count",
        "lines_link",
        "created_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        # The bytes carry full account numbers: never read by a staff page.
        return super().get_queryset(request).defer("content")

    account_link = link_column("account", description="mirrored internal account")
    opening_display = money_column("opening_balance", description="opening balance")
    closing_display = money_column("closing_balance", description="closing balance")

    @admin.display(description="period", ordering="period_end")
    def period_display(self, obj):
        if obj.period_start == obj.period_end:
            return obj.period_end or "—"
        return f"{obj.period_start or '…'} – {obj.period_end or '…'}"

    @admin.display(description="proof")
    def proof_display(self, obj):
        """The statement's proof now (docs/reconciliation.md, "The proof")."""
        proof = statement_proof(obj)
        if proof is None:
            return "— (intraday, or not reconciled yet)"
        words = (
            f"the ledger at {proof.closing_at:%Y-%m-%d %H:%M %Z} "
            f"{money(proof.ledger_balance, obj.currency)}; the closing balance "
            f"{money(proof.closing_balance, obj.currency)} less the standing breaks "
            f"{money(proof.standing_breaks, obj.currency)}"
        )
        if proof.holds:
            return f"Holds: {words}."
        return f"Does not hold, by {money(proof.difference, obj.currency)}: {words}."

    @admin.display(description="bank account")
    def bank_account_display(self, obj):
        return _masked(obj.account_last4)

    @admin.display(description="lines")
    def lines_link(self, obj):
        return changelist_link(BankStatementLine, f"All {obj.line_count} lines", statement=obj.pk)


@admin.register(BankStatementLine)
class BankStatementLineAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A statement's bookings, in the file's order (filter by statement from its page)."""

    institution_path = "statement__institution"
    list_display = [
        "id",
        "statement_link",
        "position",
        "value_date",
        "direction",
        "amount_display",
        "bank_reference",
        "end_to_end_id",
    ]
    list_filter = ["direction", "currency", "statement__institution"]
    list_select_related = ["statement"]
    search_fields = ["id", "statement_id", "bank_reference", "end_to_end_id", "trace_number"]
    search_help_text = (
        "An exact line id, statement id, bank reference, end-to-end id or trace number."
    )
    fields = [
        "id",
        "statement_link",
        "position",
        "booking_date",
        "value_date",
        "direction",
        "amount_display",
        "currency",
        "bank_reference",
        "end_to_end_id",
        "trace_number",
        "remittance",
        "counterparty_name",
        "counterparty_display",
        "batch_count",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("statement__content")

    statement_link = link_column("statement", description="statement", ordering="statement_id")
    amount_display = money_column("amount", description="amount", ordering="amount")

    @admin.display(description="counterparty account")
    def counterparty_display(self, obj):
        return _masked(obj.counterparty_account_last4)


@admin.register(ExpectedPayment)
class ExpectedPaymentAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "status",
        "direction",
        "amount_min_display",
        "amount_max_display",
        "date_to",
        "reference",
    ]
    list_filter = ["status", "direction", "currency", "institution"]
    search_fields = ["id", "reference", "end_to_end_id", "trace_number"]
    search_help_text = "An exact id, reference, end-to-end id or trace number."
    fields = [
        "id",
        "institution",
        "status",
        "currency",
        "direction",
        "amount_min_display",
        "amount_max_display",
        "date_from",
        "date_to",
        "reference",
        "end_to_end_id",
        "trace_number",
        "metadata",
        "matched_at",
        "created_at",
    ]
    readonly_fields = fields

    amount_min_display = money_column("amount_min", description="at least")
    amount_max_display = money_column("amount_max", description="at most")


@admin.register(ReconciliationRule)
class ReconciliationRuleAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "position",
        "name",
        "conditions_display",
        "cardinality",
        "amount_tolerance",
        "date_window_days",
    ]
    list_filter = ["cardinality", "institution"]
    search_fields = ["id", "name"]
    search_help_text = "An exact rule id or name."
    fields = [
        "id",
        "institution",
        "position",
        "name",
        "conditions_display",
        "cardinality",
        "amount_tolerance",
        "date_window_days",
        "created_at",
    ]
    readonly_fields = fields

    @admin.display(description="conditions")
    def conditions_display(self, obj):
        return ", ".join(f"{c['field']} {c['operator']}" for c in obj.conditions)


@admin.register(ReconciliationBreak)
class ReconciliationBreakAdmin(CaseWork, ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """A break, with the statement line and the ledger lines it concerns side by side; a case
    (the "mine" queue, notes), resolved by its actions (docs/reconciliation.md, "Breaks")."""

    list_display = ["id", "kind", "state", "amount_display", "statement_link", "created_at"]
    list_filter = ["kind", "state", "currency", "institution"]
    list_select_related = ["statement"]
    search_fields = ["id", "statement_id", "statement_line_id", "settlement_id"]
    search_help_text = "An exact break id, statement id, statement line id or settlement id."
    actions = [
        book_credit,
        book_fee,
        force_post,
        place_credit,
        resolve_without_money,
        note_breaks,
        take_breaks,
        assign_breaks,
    ]
    fields = [
        "id",
        "institution",
        "kind",
        "state",
        "case_display",
        "amount_display",
        "statement_link",
        "statement_line_link",
        "line_display",
        "settlement_link",
        "settlement_row_link",
        "row_display",
        "ledger_lines_display",
        "expected_payment_link",
        "resolution",
        "resolved_at",
        "resolved_on",
        "created_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("statement__content")

    amount_display = money_column(
        "amount", description="amount (statement or network less TX)", ordering="amount"
    )
    statement_link = link_column("statement", description="statement", ordering="statement_id")
    statement_line_link = link_column("statement_line", description="statement line")
    expected_payment_link = link_column("expected_payment", description="expected payment")
    settlement_link = link_column("settlement", description="network settlement")
    settlement_row_link = link_column("settlement_row", description="settlement row")

    @admin.display(description="the network says")
    def row_display(self, obj):
        row = obj.settlement_row
        if row is None:
            return "—"
        return f"{row.kind} {row.amount} {obj.currency} {row.network_transaction_id}"

    @admin.display(description="the statement says")
    def line_display(self, obj):
        line = obj.statement_line
        if line is None:
            return "—"
        return (
            f"{line.value_date} {line.direction} {money(line.amount, line.currency)} "
            f"{line.bank_reference or line.end_to_end_id or line.trace_number}"
        )

    @admin.display(description="the ledger says")
    def ledger_lines_display(self, obj):
        if obj.match_id is not None:
            entries = [item.entry for item in obj.match.ledger_lines.select_related("entry")]
        else:
            entries = [obj.entry] if obj.entry_id is not None else []
        if not entries:
            return "—"
        return format_html_join(
            ", ",
            "{} {} (journal {})",
            ((e.direction, money(e.amount, e.currency), e.journal_id) for e in entries),
        )
