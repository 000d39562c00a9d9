"""Case work on the pages of the rows that may be cases (docs/back-office.md, "Case work"):
disputes and monitoring alerts, and the reconciliation breaks when they land.

`CaseWork`, mixed into such a row's admin (before its base), adds the "assigned" list filter
(the "mine" queue: `?assigned=me`, the open rows assigned to the signed-in user; also
`me_all` and `nobody`) and the case on the row's page (who works on it, since when, by whose
assignment, and the notes, newest first). The writes are the declared actions of
`backoffice.actions.cases` (`case_actions`), which the admin lists in its `actions`. Nothing
here writes, and nothing registers an admin.
"""

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.timezone import localtime

from backoffice.case_kinds import CASE_KINDS
from backoffice.selectors import (
    assigned_to,
    assigned_to_nobody,
    case_of,
    notes_of,
)

MINE = "me"
MINE_ALL = "me_all"
NOBODY = "nobody"


class AssignedFilter(admin.SimpleListFilter):
    """The "mine" queue: the open rows assigned to the signed-in user (`?assigned=me`); also
    theirs closed too, and the open rows nobody works on (the queue to take from)."""

    title = "assigned to"
    parameter_name = "assigned"

    def lookups(self, request, model_admin):
        return [
            (MINE, "Me: open (mine)"),
            (MINE_ALL, "Me: all, closed too"),
            (NOBODY, "Nobody: open"),
        ]

    def queryset(self, request, queryset):
        open_ = CASE_KINDS[queryset.model].open
        if self.value() == MINE:
            return queryset.filter(open_, pk__in=assigned_to(request.user, queryset.model))
        if self.value() == MINE_ALL:
            return queryset.filter(pk__in=assigned_to(request.user, queryset.model))
        if self.value() == NOBODY:
            return assigned_to_nobody(queryset.filter(open_))
        return queryset


class CaseWork:
    """The case of each row on a ModelAdmin: list it as `CaseWork, <its base>` and add
    `"case_display"` to its fields (read-only). No column on the list: the lists fit 1400 px
    (docs/back-office.md), and the filter says whose rows they are."""

    def get_list_filter(self, request):
        return [AssignedFilter, *super().get_list_filter(request)]

    @admin.display(description="case work (assignee and notes)")
    def case_display(self, obj):
        case = case_of(obj)
        if case is None or case.assigned_at is None:
            assigned = "Nobody has been assigned."
        elif case.assignee is None:
            assigned = format_html(
                "Nobody (unassigned by {} at {})",
                case.assigned_by.get_username(),
                _when(case.assigned_at),
            )
        else:
            assigned = format_html(
                "<strong>{}</strong> (assigned by {} at {})",
                case.assignee.get_username(),
                case.assigned_by.get_username(),
                _when(case.assigned_at),
            )
        notes = notes_of(case)
        if not notes:
            return format_html("<p>{}</p><p>No note.</p>", assigned)
        return format_html(
            '<p>{}</p><table class="case-notes"><thead><tr><th>when</th><th>by</th>'
            "<th>note</th></tr></thead><tbody>{}</tbody></table>",
            assigned,
            format_html_join(
                "",
                '<tr><td>{}</td><td>{}</td><td class="case-note">{}</td></tr>',
                ((_when(note.created_at), note.author.get_username(), note.text) for note in notes),
            ),
        )


def _when(moment) -> str:
    """A time as the back office's pages show it (local, to the minute)."""
    return f"{localtime(moment):%Y-%m-%d %H:%M}"
