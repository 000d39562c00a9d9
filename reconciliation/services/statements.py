"""A statement of the bank received (docs/reconciliation.md, "Statements in"): read whole
(`reconciliation.formats`), then stored with its lines in one transaction. The same bytes again
are the same statement (a unique constraint decides, also for two uploads at once)."""

import hashlib

from django.db import IntegrityError, transaction

from accounts.models import Account
from accounts.services.accounts import internal_account
from events.services import emit_for

from ..formats import StatementRefused, read, sniff
from ..models import BankStatement, BankStatementLine

MAX_FILE_BYTES = 64 * 1024 * 1024  # as a rail file (payments.services.inbound_files)


def bank_statement_receive(
    *, institution, fmt: str, name: str, content: bytes
) -> tuple[BankStatement, bool]:
    """The statement and whether it is new; `StatementRefused` for a file that is not valid,
    of which nothing is kept."""
    if len(content) > MAX_FILE_BYTES:
        raise StatementRefused(f"{len(content)} bytes; at most {MAX_FILE_BYTES}")
    if not content:
        raise StatementRefused("the file is empty")
    digest = hashlib.sha256(content).hexdigest()
    existing = BankStatement.objects.filter(institution=institution, sha256=digest).first()
    if existing is not None:
        return existing, False
    parsed = read(content, fmt)
    try:
        with transaction.atomic():
            account = internal_account(
                institution=institution,
                code=Account.InternalCode.RAIL_SETTLEMENT,
                currency=parsed.currency,
            )
            statement = BankStatement.objects.create(
                institution=institution,
                account=account,
                format=fmt,
                name=name[:200],
                sha256=digest,
                content=content,
                bank_statement_id=parsed.statement_id[:140],
                sequence=parsed.sequence[:40],
                account_last4=parsed.account_last4,
                currency=parsed.currency,
                opening_balance=parsed.opening_balance,
                closing_balance=parsed.closing_balance,
                period_start=parsed.period_start,
                period_end=parsed.period_end,
                line_count=len(parsed.lines),
            )
            BankStatementLine.objects.bulk_create(
                [
                    BankStatementLine(
                        statement=statement,
                        position=position,
                        booking_date=line.booking_date,
                        value_date=line.value_date,
                        amount=line.amount,
                        direction=line.direction,
                        currency=line.currency,
                        bank_reference=line.bank_reference[:140],
                        end_to_end_id=line.end_to_end_id[:140],
                        trace_number=line.trace_number[:40],
                        remittance=line.remittance[:500],
                        counterparty_name=line.counterparty_name[:140],
                        counterparty_account_last4=line.counterparty_account_last4,
                        batch_count=line.batch_count,
                    )
                    for position, line in enumerate(parsed.lines, start=1)
                ],
                batch_size=1000,
            )
            emit_for(
                statement,
                "bank_statement.received",
                data={
                    "bank_statement_id": statement.pk,
                    "format": fmt,
                    "currency": statement.currency,
                    "line_count": statement.line_count,
                },
            )
    except IntegrityError:
        # The same bytes stored at the same moment by another request: theirs is the one.
        existing = BankStatement.objects.filter(institution=institution, sha256=digest).first()
        if existing is None:
            raise
        return existing, False
    return statement, True


def statement_from_inbox(*, institution, name: str, content: bytes) -> str | None:
    """A file found in the rails' inbox (payments.connector, which calls this as its statement
    reader): None when it looks like no statement (a rail file), "" when it was received as
    one (again: the statement as it was), else why it is refused (nothing of it is kept here;
    the connector keeps the file refused)."""
    fmt = sniff(content)
    if fmt is None:
        return None
    try:
        bank_statement_receive(institution=institution, fmt=fmt, name=name, content=content)
    except StatementRefused as refused:
        return refused.reason or "not valid"
    return ""
