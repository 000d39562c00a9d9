"""The two presentations of one API (docs/design.md section 4), as small explicit adapters.

v2 is the current model: the resource at the root plus `meta`, 201 on creation, errors as
`{code, message, details?}`. v1 is the legacy line: `{data, meta}` envelopes, 200 on creation,
errors as `{error: {...}, meta}`. Views build the version-neutral resource dict and call these.
"""

V1 = "v1"
V2 = "v2"
VERSIONS = (V1, V2)


def version_of_path(path: str) -> str:
    """The version a raw URL path belongs to (for errors raised outside DRF's views)."""
    return V1 if path.startswith("/TX/v1/") or path == "/TX/v1" else V2


def success_body(version: str, resource: dict, meta: dict) -> dict:
    if version == V1:
        return {"data": resource, "meta": meta}
    return {**resource, "meta": meta}


def list_body(version: str, items: list, next_cursor: str | None, meta: dict) -> dict:
    # Both versions list the same way: a `data` array and the cursor of the next page.
    return {
        "data": items,
        "nextCursor": next_cursor,
        "hasMore": next_cursor is not None,
        "meta": meta,
    }


def created_status(version: str) -> int:
    return 200 if version == V1 else 201


def error_body(version: str, code: str, message: str, details, meta: dict) -> dict:
    error = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    if version == V1:
        return {"error": error, "meta": meta}
    return error
