"""The cursor of a statement's next page (docs/statements.md, "Paging").

A statement's balances, totals and line count are computed for its first page only: the cursor
of the next page carries them with the last line's position, signed with SECRET_KEY
(django.core.signing, this salt) so that a client can neither alter them nor carry them to
another account or period. A cursor without a signature (a plain position, as before figures
travelled in it) is still read: its page computes them.
"""

from datetime import date

from django.core import signing

from accounts.models import Account, StatementLine
from accounts.statement_lines.periods import Period, Statement
from api.pagination import decode_cursor
from core.exceptions import ValidationFailed

CURSOR_SALT = "tx.statements.cursor"


def statement_cursor(statement: Statement, after: str) -> str:
    period = statement.period
    return signing.dumps(
        {
            "account": statement.account.pk,
            "from": period.first.isoformat(),
            "to": period.last.isoformat(),
            "after": after,
            "opening": statement.opening_balance,
            "closing": statement.closing_balance,
            # Only the types with lines: every other one is zeros.
            "types": {
                kind: [totals["credits"], totals["debits"], totals["count"]]
                for kind, totals in statement.by_type.items()
                if totals["count"] or totals["credits"] or totals["debits"]
            },
            "lines": statement.line_count,
        },
        salt=CURSOR_SALT,
        compress=True,
    )


def cursor_read(
    cursor: str | None, *, account_id: str, first: date, last: date
) -> tuple[str | None, dict | None]:
    """(the position to page after, the signed figures of the statement or None): a cursor that
    is not valid, or not one of this statement, is refused."""
    if not cursor:
        return None, None
    if ":" not in cursor:  # base64url has no ":", a signed value always has one
        return decode_cursor(cursor), None
    try:
        value = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature:
        raise ValidationFailed(details={"cursor": "Not a valid cursor."}) from None
    if (value.get("account"), value.get("from"), value.get("to")) != (
        account_id,
        first.isoformat(),
        last.isoformat(),
    ):
        raise ValidationFailed(details={"cursor": "Not a cursor of this statement."})
    return value["after"], value


def statement_of_cursor(value: dict, account: Account, period: Period) -> Statement:
    """The statement whose figures the cursor carries."""
    by_type = {kind: {"credits": 0, "debits": 0, "count": 0} for kind in StatementLine.Type.values}
    for kind, (credits, debits, count) in value["types"].items():
        by_type[kind] = {"credits": credits, "debits": debits, "count": count}
    return Statement(
        account=account,
        period=period,
        opening_balance=value["opening"],
        closing_balance=value["closing"],
        credits=sum(totals["credits"] for totals in by_type.values()),
        debits=sum(totals["debits"] for totals in by_type.values()),
        by_type=by_type,
        line_count=value["lines"],
    )
