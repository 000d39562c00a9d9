"""Row locks of the generic machinery (docs/design.md section 2: each app's locks in its
`locks.py`; the order between them is in docs/money.md, "Locking").

A batch job that may run in several processes at once takes only the rows no one else holds
(`SKIP LOCKED`): it never waits for a row, so it can never be part of a wait cycle on them.
"""

from django.db.models import QuerySet


def lock_free_batch(rows: QuerySet, size: int) -> list:
    """The first `size` rows of `rows` by primary key that no other transaction holds, locked
    (FOR UPDATE SKIP LOCKED). Only the rows of `rows`' own table: a related row read with them
    (select_related) is not locked."""
    return list(rows.select_for_update(skip_locked=True, of=("self",)).order_by("pk")[:size])
