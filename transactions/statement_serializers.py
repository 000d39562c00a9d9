"""The statement document (docs/statements.md): the JSON of `GET /accounts/{accountId}/statements`
and of a month's statement, its lines in the shape of the version's transactions
(`TRANSACTION_OUTPUT`)."""

from rest_framework import serializers

from accounts.statement_lines.periods import Statement
from api.serializers import Serializer
from api.versions import V1, V2

from .apis import TRANSACTION_OUTPUT


class TypeTotals(Serializer):
    credits = serializers.IntegerField(help_text="Minor units.")
    debits = serializers.IntegerField(help_text="Minor units.")
    count = serializers.IntegerField(help_text="Posted lines counted in these totals.")


class StatementTotals(Serializer):
    credits = serializers.IntegerField(help_text="Posted money in, minor units.")
    debits = serializers.IntegerField(help_text="Posted money out, minor units.")
    byType = serializers.DictField(  # noqa: N815
        child=TypeTotals(), help_text="Per statement line type (every type, zeros included)."
    )


def _statement_out(name: str, line_out: type) -> type:
    """The statement document, its lines in the shape of the version's transactions."""
    return type(
        name,
        (Serializer,),
        {
            "accountId": serializers.CharField(),
            "currency": serializers.CharField(),
            "from": serializers.DateField(help_text="First day, in the institution's calendar."),
            "to": serializers.DateField(help_text="Last day (inclusive)."),
            "timeZone": serializers.CharField(help_text="The institution's time zone (IANA)."),
            "openingBalance": serializers.IntegerField(
                help_text="Posted balance at the first instant of `from` (minor units)."
            ),
            "closingBalance": serializers.IntegerField(
                help_text="Posted balance at the end of `to`: openingBalance + credits - debits."
            ),
            "totals": StatementTotals(),
            "lineCount": serializers.IntegerField(
                help_text="Lines made in the period (every page)."
            ),
            "lines": line_out(many=True, help_text="A page of the lines, oldest first."),
            "nextCursor": serializers.CharField(
                allow_null=True, help_text="Pass as `cursor` for the next lines; null at the end."
            ),
            "hasMore": serializers.BooleanField(),
            "__module__": __name__,
        },
    )


STATEMENT_OUTPUT = {
    V1: _statement_out("StatementOut", TRANSACTION_OUTPUT[V1]),
    V2: _statement_out("StatementOutV2", TRANSACTION_OUTPUT[V2]),
}


def document_of(statement: Statement, lines: list, next_cursor: str | None, line_out: type) -> dict:
    period = statement.period
    return {
        "accountId": statement.account.pk,
        "currency": statement.account.currency,
        "from": period.first.isoformat(),
        "to": period.last.isoformat(),
        "timeZone": period.time_zone,
        "openingBalance": statement.opening_balance,
        "closingBalance": statement.closing_balance,
        "totals": {
            "credits": statement.credits,
            "debits": statement.debits,
            "byType": statement.by_type,
        },
        "lineCount": statement.line_count,
        "lines": line_out(lines, many=True).data,
        "nextCursor": next_cursor,
        "hasMore": next_cursor is not None,
    }
