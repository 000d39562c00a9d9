"""Row locks of interest (docs/design.md section 2; the order is docs/money.md's, "Locking"):
an institution's interest books in a currency, the operation's own row, taken before the
accounts its journal posts to."""

from .models import AccrualBook


def lock_book(book_id: int) -> AccrualBook:
    """The interest books, their row locked until the transaction ends: the accrual job's
    batches of one institution and currency book one after another."""
    return AccrualBook.objects.select_for_update().get(pk=book_id)
