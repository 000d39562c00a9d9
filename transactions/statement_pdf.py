"""The PDF of a statement (fpdf2): the institution, the account (its number masked: the last 4
digits only), the period, the opening and closing balance, the totals, then every line (its day
in the institution's calendar, type, description, amount with the currency's exponent).

fpdf2's core font (Helvetica) is Latin-1: a character outside it prints as `?` (no font file
to ship; fpdf2 installs from PyPI alone)."""

from collections.abc import Iterable

from fpdf import FPDF, XPos, YPos

from accounts.models import StatementLine
from accounts.statement_lines.periods import Statement
from core.money import money

FONT = "Helvetica"
NEXT = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}
COLUMNS = [("Date", 22), ("Type", 20), ("Status", 20), ("Description", 88), ("Amount", 40)]


def _text(value: str) -> str:
    return value.encode("latin-1", "replace").decode("latin-1")


def masked(account_number: str | None) -> str:
    return f"****{account_number[-4:]}" if account_number else "****"


def _row(pdf: FPDF, values: list[str], *, bold: bool = False) -> None:
    pdf.set_font(FONT, "B" if bold else "", 9)
    for (_, width), value in zip(COLUMNS, values, strict=True):
        align = "R" if width == COLUMNS[-1][1] else "L"
        pdf.cell(width, 6, _text(value), align=align)
    pdf.ln(6)


def statement_pdf(statement: Statement, lines: Iterable[StatementLine]) -> bytes:
    account, period = statement.account, statement.period
    currency = account.currency
    pdf = FPDF(format="A4")
    pdf.set_title(_text(f"Statement {period.first.isoformat()} to {period.last.isoformat()}"))
    pdf.add_page()
    pdf.set_font(FONT, "B", 14)
    pdf.cell(0, 8, _text(account.institution.name), **NEXT)
    pdf.set_font(FONT, "", 10)
    for text in (
        f"Account statement - account {masked(account.account_number)} ({currency})",
        f"Period: {period.first.isoformat()} to {period.last.isoformat()} ({period.time_zone})",
        f"Opening balance: {money(statement.opening_balance, currency)}",
        f"Credits: {money(statement.credits, currency)}",
        f"Debits: {money(statement.debits, currency)}",
        f"Closing balance: {money(statement.closing_balance, currency)}",
        f"Lines: {statement.line_count}",
    ):
        pdf.cell(0, 6, _text(text), **NEXT)
    pdf.ln(2)
    _row(pdf, ["Type", "", "", "Credits / debits", "Count"], bold=True)
    for kind, totals in statement.by_type.items():
        if totals["count"]:
            _row(
                pdf,
                [
                    kind,
                    "",
                    "",
                    f"{money(totals['credits'], currency)} / {money(totals['debits'], currency)}",
                    str(totals["count"]),
                ],
            )
    pdf.ln(4)
    pdf.set_font(FONT, "", 9)
    zone = period.start.tzinfo
    # A table: a long description wraps within its cell, the header repeats on every page.
    with pdf.table(
        col_widths=[width for _, width in COLUMNS],
        text_align=("LEFT", "LEFT", "LEFT", "LEFT", "RIGHT"),
        line_height=5,
        first_row_as_headings=True,
    ) as table:
        table.row([name for name, _ in COLUMNS])
        for line in lines:
            sign = "" if line.is_credit else "-"
            table.row(
                [
                    line.created_at.astimezone(zone).date().isoformat(),
                    line.type,
                    line.status,
                    _text(line.description),
                    f"{sign}{money(line.amount, line.currency)}",
                ]
            )
    return bytes(pdf.output())
