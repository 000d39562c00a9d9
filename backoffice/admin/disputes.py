"""Back office for disputes (issue 32 item 6; docs/disputes.md, "Back office").

Disputes are filed and played through the API; here staff read a dispute whole (its stage,
money, liability split, evidence, steps and deadlines), find the disputes due (the dashboard's
queue: a deadline the deadline job found approaching or missed, not met), and move it with the
actions below (`backoffice.actions.disputes`), each through the stages' services as the API
does (its locks, its money, its events, the staff user as the actor), with a reason asked on a
confirmation page and written on the dispute's step and in the admin history:

- "Submit": the dispute is filed and the cardholder credited provisionally (unless its product
  credits by the deadline);
- "Grant the provisional credit now": credited apart from the stages (before a product crediting
  by the deadline would, or a draft not yet filed);
- "Deny" (and "Withdraw"): closed, the provisional credit reversed (after the policy's notice:
  Reg E's five business days);
- "Accept the loss, write it off": closed, what the merchant re-presented written off;
- "Accept the loss, the cardholder bears it": closed, that much of the credit reversed.

A move the dispute's stage does not allow is refused for that dispute alone (409, said in a
message) and changes nothing. No form ever saves a dispute.

Disputes are cases (`backoffice.admin.cases`): notes and an assignee, the "mine" queue
(`?assigned=me`), with the actions of `backoffice.actions.cases`.
"""

from django.contrib import admin
from django.db.models import OuterRef, Subquery
from django.utils.formats import date_format
from django.utils.html import format_html

from accounts.models import StatementLine
from api.names import api_data
from backoffice.actions.disputes import (
    assign_disputes,
    cardholder_bears,
    deny,
    grant_credit,
    note_disputes,
    submit,
    take_disputes,
    withdraw,
    write_off,
)
from backoffice.admin.cases import CaseWork
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyInline,
    changelist_link,
    fields_display,
    link_column,
    money_column,
)
from disputes.models import Dispute, DisputeDeadline, DisputeStep
from disputes.selectors import due_dispute_ids
from events.models import Event

# A dispute's nearest deadline not met: the queue's order (a lookup a row, by the deadlines'
# (dispute, name) key).
NEAREST_DEADLINE = Subquery(
    DisputeDeadline.objects.filter(dispute=OuterRef("pk"), met_at__isnull=True)
    .order_by("due_on")
    .values("due_on")[:1]
)


class DueFilter(admin.SimpleListFilter):
    """The disputes due: a deadline not met that the deadline job found approaching or
    missed (in each institution's own calendar). Listed by their nearest deadline
    (`DisputeAdmin.get_ordering`)."""

    title = "deadline"
    parameter_name = "due"

    def lookups(self, request, model_admin):
        return [("yes", "Due (approaching or missed)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(pk__in=due_dispute_ids())
        return queryset


class DisputeStepInline(ReadOnlyInline):
    model = DisputeStep
    fields = [
        "kind",
        "from_status",
        "to_status",
        "amount_display",
        "journal",
        "reason",
        "created_at",
    ]
    readonly_fields = fields
    show_change_link = False
    verbose_name = "step"

    amount_display = money_column("amount", currency="dispute.currency", description="amount")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("dispute")

    verbose_name_plural = "steps (the dispute's history, oldest first)"


class DisputeDeadlineInline(ReadOnlyInline):
    model = DisputeDeadline
    fields = ["name", "due_on", "met_at", "approaching_at", "missed_at"]
    readonly_fields = fields
    show_change_link = False
    verbose_name_plural = "deadlines (the card product's dispute policy)"


@admin.register(Dispute)
class DisputeAdmin(CaseWork, ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = [
        "id",
        "status",
        "outcome",
        "reason",
        "amount_display",
        "remaining_display",
        "next_due",
        "authorization_link",
        "created_at",
    ]
    list_filter = [DueFilter, "status", "outcome", "reason", "institution"]
    list_select_related = ["authorization"]
    search_fields = ["id", "authorization_id", "card_id", "account_id"]
    search_help_text = "An exact dispute, card payment (authorization), card or account id."
    show_full_result_count = False
    actions = [
        submit,
        grant_credit,
        deny,
        withdraw,
        write_off,
        cardholder_bears,
        note_disputes,
        take_disputes,
        assign_disputes,
    ]
    inlines = [DisputeDeadlineInline, DisputeStepInline]
    fields = [
        "id",
        "institution",
        "status",
        "outcome",
        "case_display",
        "resolution_reason",
        "reason",
        "authorization_link",
        "card_link",
        "account_link",
        "amount_display",
        "provisional_credit_display",
        "provisional_credit_reverses_on",
        "recovered_display",
        "cardholder_liable_display",
        "written_off_display",
        "remaining_display",
        "cardholder_contacted_at",
        "note",
        "evidence_display",
        "statement_lines_link",
        "events_link",
        "submitted_at",
        "closed_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("deadlines")

    def get_ordering(self, request):
        """The disputes due by their nearest deadline, the missed first (they are the nearest);
        every other list newest first, as before."""
        if request.GET.get(DueFilter.parameter_name) == "yes":
            return [NEAREST_DEADLINE.asc(), "pk"]
        return super().get_ordering(request)

    authorization_link = link_column("authorization", description="card payment")
    card_link = link_column("card", description="card")
    account_link = link_column("account", description="account")
    amount_display = money_column("amount", description="disputed", ordering="amount")
    provisional_credit_display = money_column(
        "provisional_credit", description="credited to the cardholder (not given back)"
    )
    recovered_display = money_column("recovered", description="recovered from the network")
    cardholder_liable_display = money_column(
        "cardholder_liable", description="borne by the cardholder"
    )
    written_off_display = money_column("written_off", description="written off by the issuer")
    remaining_display = money_column("remaining", description="still open")

    @admin.display(description="next deadline", ordering=NEAREST_DEADLINE)
    def next_due(self, obj):
        """The nearest deadline not met, its day in the institution's calendar; marked when the
        deadline job found it missed (or approaching)."""
        open_ = [d for d in obj.deadlines.all() if d.met_at is None]
        if not open_:
            return "—"
        first = min(open_, key=lambda d: (d.due_on, d.name))
        what = f"{first.name.replace('_', ' ').capitalize()}, {date_format(first.due_on)}"
        if first.missed_at:
            return format_html('<strong class="deadline-missed">Missed:</strong> {}', what)
        if first.approaching_at:
            return format_html('{} <span class="deadline-approaching">(approaching)</span>', what)
        return what

    @admin.display(description="evidence")
    def evidence_display(self, obj):
        return "—" if not obj.evidence else fields_display(api_data(obj.evidence), obj.currency)

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(StatementLine, "Its provisional credit and reversal", dispute=obj.pk)

    @admin.display(description="events")
    def events_link(self, obj):
        return changelist_link(Event, "Events of this dispute", object_id=obj.pk)
