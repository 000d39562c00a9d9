"""Every list of the back office, exported to CSV (docs/back-office.md, "Exports").

A list's "Export to CSV" (`backoffice.kit.CsvExport`, on every base of the kit) downloads what
the list shows under its current filters, search and ordering: the list's own columns, in its
order, for every row, not only the page. What leaves is what the page shows, no more:

- **the list's columns only** (`get_list_display`), read as the list reads them
  (`lookup_field`) from the list's own queryset (`get_queryset`: the institution limit, the
  secrets a page never loads); a masked card number stays masked, an account number or a
  national id that no list shows is in no export;
- **money in major units, the currency beside it**: a money column (`kit.money_column`, or a
  column marked with `kit.money_cells`) is two cells, "amount" `1234.50` and "amount
  (currency)" `EUR` (`core.money.major_units`: the currency's exponent, no grouping), so a
  spreadsheet reads a number; other columns as the page writes them, without their HTML;
  dates and times in ISO 8601 (times in UTC, to the second); yes and no for booleans; an
  empty cell for none;
- **no formula**: a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is
  written after a single quote (OWASP, "CSV Injection"), so a spreadsheet shows it as text and
  never runs it. Cells the export writes as numbers (amounts, counts) are numbers, not text,
  and stay as they are: `-27.50` is a debit, never a formula;
- **streamed**: a `StreamingHttpResponse` over the rows read `CHUNK` at a time through a
  server-side cursor (`QuerySet.iterator`, inside one transaction so PostgreSQL reads as the
  client takes them), never all rows in memory, with no row limit;
- **audited before the first row leaves**: one `StaffEvent` `staff.list_exported` (the staff
  user, the list, its filters and search, the number of rows), committed before the response
  starts, so an export that fails half way is recorded too. The number is the count of the
  list when the export began (the rows stream from a second read, a moment later).
"""

import csv
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from html import unescape
from typing import Any

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import label_for_field, lookup_field
from django.core.exceptions import ObjectDoesNotExist
from django.db import models, transaction
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import strip_tags
from django.utils.safestring import SafeData

from backoffice.models import StaffEvent
from backoffice.staff_events import staff_event_record
from core.money import major_units

# Rows fetched from the server-side cursor at a time, and written to the response per chunk.
CHUNK = 2000
# The characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What a page shows for "nothing": an empty cell in the file.
NOTHING = {"", "—", "-"}
# A run of nine digits or more (spaces and dashes between them), not part of an id: a card,
# account or phone number typed into a list's search. The audit record keeps its last four.
LONG_NUMBER = re.compile(r"(?<![0-9A-Za-z_])\d(?:[ -]?\d){8,}(?![0-9A-Za-z_])")
# Set on the request while an export builds its changelist (`uncounted`).
EXPORTING = "_backoffice_export"


class Number(str):
    """A cell written from a number (an amount, a count): never taken for a formula."""


def safe_cell(value: str) -> str:
    """`value` as a cell no spreadsheet runs: a text starting with a formula's character is
    written after a single quote; a `Number` as it is."""
    if not isinstance(value, Number) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def text_of(value) -> str:
    """A value as the file writes it (the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | Decimal | float):
        return Number(value)
    if isinstance(value, datetime):
        if timezone.is_aware(value):
            value = value.astimezone(timezone.get_current_timezone())
        return value.isoformat(timespec="seconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, list | tuple):
        return ", ".join(text_of(item) for item in value)
    text = str(value)
    if isinstance(value, SafeData):  # HTML the page built: its text, a line break a " · "
        text = unescape(strip_tags(LINE_BREAK.sub(" · ", text)))
    text = " ".join(text.split()) if isinstance(value, SafeData) else text
    return "" if text.strip() in NOTHING else text


LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Any], str]


def columns(model_admin, request) -> list[Column]:
    """The list's columns, as the file writes them: a money column as two."""
    found = []
    for name in model_admin.get_list_display(request):
        if name == "action_checkbox":
            continue
        header = str(label_for_field(name, model_admin.model, model_admin))
        money_of = getattr(_attribute(model_admin, name), "money_of", None)
        if money_of is not None:
            found.append(Column(header, lambda obj, of=money_of: _amount(*of(obj))))
            found.append(Column(f"{header} (currency)", lambda obj, of=money_of: of(obj)[1] or ""))
        else:
            found.append(Column(header, lambda obj, name=name: _cell(model_admin, name, obj)))
    return found


def _attribute(model_admin, name):
    if callable(name):
        return name
    return getattr(model_admin, name, None) or getattr(model_admin.model, name, None)


def _amount(amount, currency) -> str:
    return "" if amount is None else Number(major_units(amount, currency))


def _cell(model_admin, name, obj) -> str:
    try:
        field, attr, value = lookup_field(name, obj, model_admin)
    except ObjectDoesNotExist:
        return ""
    if field is not None and not field.auto_created:
        if isinstance(field.remote_field, models.ManyToOneRel):
            value = getattr(obj, field.name)
            return "" if value is None else text_of(str(value))
        if field.flatchoices:
            return text_of(dict(field.flatchoices).get(value, value))
    return text_of(value)


# --- The changelist without its count and page ------------------------------------------------
def is_export(request) -> bool:
    return getattr(request, EXPORTING, False)


@cache
def uncounted(changelist_class: type) -> type:
    """`changelist_class` without its results: an export reads the filtered queryset
    (`queryset`) itself, so the page's count and slice are not made."""

    def get_results(self, request):
        self.result_list = self.queryset.none()
        self.result_count = self.full_result_count = None

    name = f"Exported{changelist_class.__name__}"
    return type(name, (changelist_class,), {"get_results": get_results})


# --- The response -------------------------------------------------------------------------------
def export_list(model_admin, request):
    """The CSV of `model_admin`'s list as `request` filters, searches and orders it, streamed,
    after its audit record (the module docstring)."""
    opts = model_admin.model._meta
    setattr(request, EXPORTING, True)
    try:
        changelist = model_admin.get_changelist_instance(request)
    except IncorrectLookupParameters:
        # As the list answers a filter it does not know: back to it, with its error flag.
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        return HttpResponseRedirect(f"{url}?e=1")
    finally:
        setattr(request, EXPORTING, False)
    queryset = changelist.queryset
    found = columns(model_admin, request)
    rows = queryset.count()
    with transaction.atomic():
        staff_event_record(
            type=StaffEvent.Type.LIST_EXPORTED,
            user=request.user,
            by=request.user,
            data={"list": opts.label_lower, "filters": filters_of(request), "rows": rows},
        )
    response = StreamingHttpResponse(
        _lines(queryset, found), content_type="text/csv; charset=utf-8"
    )
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = (
        f'attachment; filename="{opts.app_label}-{opts.model_name}-{stamp}.csv"'
    )
    return response


def filters_of(request) -> dict:
    """The list's query string as the audit record keeps it: every parameter (filters, `q` the
    search, `o` the ordering), a long number in it by its last four."""
    return {
        name: [masked(value) for value in values] if len(values) > 1 else masked(values[0])
        for name, values in sorted(request.GET.lists())
    }


def masked(text: str) -> str:
    return LONG_NUMBER.sub(lambda match: "…" + re.sub(r"\D", "", match.group())[-4:], text)


class _Line:
    """What `csv.writer` writes to: the line it is given, back."""

    def write(self, line: str) -> str:
        return line


def _lines(queryset, found: list[Column]) -> Iterator[str]:
    writer = csv.writer(_Line())
    # A byte-order mark first: a spreadsheet then reads the file as UTF-8.
    yield "\ufeff" + writer.writerow([safe_cell(column.header) for column in found])
    # One transaction while the rows stream: PostgreSQL's cursor then reads as the client takes
    # them (outside one, Django's cursor is WITH HOLD and the server copies every row first).
    with transaction.atomic(using=queryset.db):
        lines = []
        for obj in queryset.iterator(chunk_size=CHUNK):
            lines.append(writer.writerow([safe_cell(column.cell(obj)) for column in found]))
            if len(lines) == CHUNK:
                yield "".join(lines)
                lines = []
        if lines:
            yield "".join(lines)
