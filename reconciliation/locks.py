"""The locks of reconciliation (docs/money.md, "Locking"): a run of matching holds its mirrored
account's reconciliation lock (a transaction advisory lock, not the account's row, which the
postings need) until it commits, so two runs over the same account's lines, of one statement or
of two, match one after the other; an expected payment is locked alone by its cancellation."""

from django.db import connection

from .models import ExpectedPayment


def lock_reconciliation(account_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"reconciliation:{account_id}"],
        )


def lock_expected_payment(expected_id: str) -> ExpectedPayment:
    return ExpectedPayment.objects.select_for_update().get(pk=expected_id)
