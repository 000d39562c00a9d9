"""Cursor pagination, newest first, over time-ordered primary keys (`core.ids`).

`limit` (1-100, default 20) and `cursor` (opaque: the `nextCursor` of the previous page). One
index scan per page whatever the table size: `WHERE id < cursor ORDER BY id DESC LIMIT n+1`.
"""

import base64
import binascii

from core.exceptions import ValidationFailed

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode()).decode().rstrip("=")


def _decode(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = base64.urlsafe_b64decode(padded.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed(details={"cursor": "Not a valid cursor."}) from None
    # isprintable: a NUL (cursor "AA") would reach PostgreSQL, which rejects it with a 500.
    if not value or len(value) > 64 or not value.isprintable():
        raise ValidationFailed(details={"cursor": "Not a valid cursor."})
    return value


def decode_cursor(cursor: str) -> str:
    """The position in a plain cursor (400 `validation_error` when it is not one)."""
    return _decode(cursor)


def page_params(request) -> tuple[int, str | None]:
    cursor = request.query_params.get("cursor")
    return page_limit(request), (_decode(cursor) if cursor else None)


def page_limit(request) -> int:
    """`limit` alone (a listing whose cursor is not a plain position reads its own)."""
    raw_limit = request.query_params.get("limit")
    limit = DEFAULT_LIMIT
    if raw_limit is not None:
        # isascii: str.isdigit() is also true for "²", which int() rejects.
        if (
            not (raw_limit.isascii() and raw_limit.isdigit())
            or not 1 <= int(raw_limit) <= MAX_LIMIT
        ):
            raise ValidationFailed(details={"limit": f"Must be an integer from 1 to {MAX_LIMIT}."})
        limit = int(raw_limit)
    return limit


def paginate(request, queryset, order_key: str = "pk") -> tuple[list, str | None]:
    """`order_key`: the field (or annotation) holding the row's id in the order to page on;
    the primary key unless a listing's index needs another expression of it."""
    limit, after = page_params(request)
    if after is not None:
        queryset = queryset.filter(**{f"{order_key}__lt": after})
    rows = list(queryset.order_by(f"-{order_key}")[: limit + 1])
    if len(rows) > limit:
        rows = rows[:limit]
        return rows, encode_cursor(rows[-1].pk)
    return rows, None
