"""The one request-body parser of the API: JSON as RFC 8259 defines it, and nothing looser.

Python's `json` module is lenient where a payments API must not be, and fragile where an
attacker can reach it. This parser refuses, with 400 `validation_error` (415 for a charset
other than UTF-8), before any view sees the body:

* bytes that are not UTF-8 (also overlong forms and encoded surrogates), a byte order mark, and
  `\\ud800`-style escapes that leave a lone surrogate (not text: PostgreSQL cannot store it);
* a `Content-Type` other than `application/json` (DRF would take `*/*` and `application/*`), or
  with a `charset` other than UTF-8 (RFC 8259 section 8.1: JSON exchanged between systems is
  UTF-8);
* nesting deeper than MAX_DEPTH: checked on the raw text, by counting brackets outside strings,
  before `json.loads` (whose recursion a few thousand `[` exhaust: RecursionError, a 500). The
  check is linear in the body's length whatever the body: every step is one pass of a regex
  that never starts a match inside a text it has already consumed (see `_STRING`), then a
  running sum in C (`accumulate`), so no body a key can send holds a worker (issue 29: the
  previous pre-scan was quadratic on `"\\"\\"\\"...`, 25 s of a worker for 64 KiB);
* the same key twice in one object (`json` keeps the last one silently: which amount did the
  client mean?);
* `NaN`, `Infinity` and `-Infinity` (not JSON), and numbers too large for a double (`1e400`,
  which `json` reads as infinity). Integers are exact (Python's), bounded by the 4300-digit
  limit of `int()` and by the body size; each field checks its own range.
"""

import json
import math
import re
from itertools import accumulate

from django.utils.http import parse_header_parameters
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.parsers import JSONParser

from core.exceptions import ValidationFailed

MAX_DEPTH = 32
UTF8_NAMES = frozenset({"utf-8", "utf8"})

# A JSON string (with its escapes), unrolled, its closing quote optional: an unterminated string
# runs to the end of the text and is consumed whole. With the quote required, a body of escaped
# quotes and no closing one (`"\"\"\"...`) made every `"` start a match that scanned to the end
# and failed: quadratic. Such a body is not JSON anyway; json.loads refuses it after this check.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _invalid(reason: str) -> ValidationFailed:
    return ValidationFailed("The request body is not valid JSON.", details={"body": reason})


def _check_depth(text: str) -> None:
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) <= MAX_DEPTH:
        return
    if max(accumulate(map(_STEP.__getitem__, map(ord, brackets)))) > MAX_DEPTH:
        raise _invalid(f"Nested deeper than {MAX_DEPTH} levels.")


def _object(pairs: list) -> dict:
    result = {}
    for key, value in pairs:
        if key in result:
            raise _invalid(f"Duplicate key {json.dumps(key)} in an object.")
        result[key] = value
    return result


def _constant(name: str):
    raise _invalid(f"{name} is not a JSON number.")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _invalid("A number is too large.")
    return value


def _has_lone_surrogate(value) -> bool:
    """Whether any key or string anywhere in `value` holds a lone surrogate (no recursion: the
    depth is bounded already, but a flat walk is as short)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        request = parser_context.get("request")
        content_type = getattr(request, "content_type", None) or media_type or ""
        declared, params = parse_header_parameters(content_type)
        # DRF picks this parser for `*/*` or `application/*` too: a body must say what it is.
        if declared.strip().lower() != self.media_type:
            raise UnsupportedMediaType(content_type)
        charset = params.get("charset")
        if charset is not None and charset.strip().lower() not in UTF8_NAMES:
            raise UnsupportedMediaType(content_type)

        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")  # strict: overlong forms and surrogates are errors
        except UnicodeDecodeError:
            raise _invalid("The body is not UTF-8.") from None
        if text.startswith("\ufeff"):
            raise _invalid("A byte order mark is not allowed.")
        _check_depth(text)
        try:
            data = json.loads(
                text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float
            )
        except ValidationFailed:
            raise
        except (ValueError, RecursionError) as exc:  # RecursionError: belt and braces
            raise _invalid(f"JSON parse error - {exc}") from None
        if _has_lone_surrogate(data):
            raise _invalid("A string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
        return data
