"""The locks of reconciliation (docs/money.md, "Locking"): a run of matching holds its mirrored
account's reconciliation lock (a transaction advisory lock, not the account's row, which the
postings need) until it commits, so two runs over the same account's lines, of one statement or
of two, match one after the other. It then locks the unmatched expected payments it may match
(of the institution and currency, by id), so a cancellation at the same moment waits or is
seen; a cancellation locks its expected payment alone.

A break's money booked by staff (`services.breaks`) takes its account's reconciliation lock
first, as a run does (a run resolving the same break and the booking follow one another), then
locks the break's row, then the postings lock the accounts: a stale or second approval finds
the break resolved and posts nothing. An assignment locks the break's row alone (after its
case's)."""

from django.db import connection

from .models import ExpectedPayment, ReconciliationBreak


def lock_reconciliation(account_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"reconciliation:{account_id}"],
        )


def lock_expected_payment(expected_id: str) -> ExpectedPayment:
    return ExpectedPayment.objects.select_for_update().get(pk=expected_id)


def lock_unmatched_expected(institution_id: str, currency: str) -> None:
    list(
        ExpectedPayment.objects.select_for_update()
        .filter(
            institution_id=institution_id,
            currency=currency,
            status=ExpectedPayment.Status.UNMATCHED,
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def lock_break(break_id: str) -> ReconciliationBreak:
    return (
        ReconciliationBreak.objects.select_for_update(of=("self",))
        .select_related("statement", "statement_line", "institution")
        .get(pk=break_id)
    )
