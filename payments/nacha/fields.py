"""The field kinds of the NACHA record layouts, a record's layout as data, and the one error.

A NACHA file is lines of 94 ASCII characters; each record kind is a fixed layout of fields at
fixed positions (1-based, inclusive, as the standard numbers them). The kinds below are the
standard's data specifications (NACHA Operating Rules, Appendix Three "ACH Record Format
Specifications", its general data specifications; the same rules are restated by the Nacha ACH
Developer Guide, achdevguide.nacha.org, "ACH File Details"):

- **alphanumeric**: left-justified, space-filled. The standard lets these fields hold any
  printable character (ASCII 0x20-0x7E), lowercase included, and a file TX reads may hold any of
  them: parsing keeps the characters as they are, so every record re-writes byte for byte.
  **What TX writes is uppercase**: a record built in code has its alphanumeric values uppercased
  when it is made (many ODFIs refuse lowercase; uppercasing a name changes nothing a bank
  matches on). Anything outside printable ASCII (accents, tabs, control characters, bytes of
  UTF-8) is refused, on write and on read: transliterating a name is the caller's choice, not the
  file format's;
- **numeric**: right-justified, zero-filled, unsigned digits only (a blank, a sign or a decimal
  point is refused); amounts are whole cents (10 digits in an entry, 12 in the controls);
- **digits**: an identifier made of digits, kept as text so its leading zeros stay (trace
  numbers, DFI identifications, the entry detail sequence number);
- **routing numbers**: 8-digit DFI identification + 1 check digit, the ABA modulus-10 check
  (weights 3, 7, 1) computed by python-stdnum (`stdnum.us.rtn`);
- **dates** YYMMDD and **times** HHMM; the standard carries no century: TX reads and writes
  years 2000-2099 (00-99 -> 2000-2099);
- **Julian days** (the settlement dates the ACH Operator inserts): 001-366, or blank;
- **constants** (record type codes, record size 094, blocking factor 10, format code 1) and
  **reserved** fields, which must be blank.

A layout (`Layout`) is the tuple of a record's `Field`s; it checks at import that the fields tile
positions 1-94 exactly, so a layout typed wrong fails before any file is read.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from stdnum.us import rtn

RECORD_LENGTH = 94
# Printable ASCII: what the standard allows in an alphanumeric field.
PRINTABLE = frozenset(chr(code) for code in range(0x20, 0x7F))


class NachaError(ValueError):
    """A record or a file refused: the record number (its line, from 1), the record kind, the
    field with its positions, and the reason. Raised whole: a file with one wrong field is
    refused, never half applied."""

    def __init__(
        self,
        reason: str,
        *,
        record_number: int | None = None,
        record: str | None = None,
        field: str | None = None,
        positions: tuple[int, int] | None = None,
    ):
        self.reason = reason
        self.record_number = record_number
        self.record = record
        self.field = field
        self.positions = positions
        super().__init__(self.describe())

    def describe(self) -> str:
        where = []
        if self.record_number is not None:
            where.append(f"record {self.record_number}")
        if self.record:
            where.append(f"({self.record})" if where else self.record)
        place = " ".join(where)
        if self.field:
            span = ""
            if self.positions:
                start, end = self.positions
                span = f" (position {start})" if start == end else f" (positions {start}-{end})"
            place = f"{place}, {self.field}{span}" if place else f"{self.field}{span}"
        return f"{place}: {self.reason}" if place else self.reason


# --- the field kinds ---------------------------------------------------------------------------
# Each kind turns the field's text into a value (`parse`, for reading), a value into the field's
# text (`format`, for writing) and checks a value given in code (`check`, when a record is made,
# returning the value as it will be written). `parse` and `check` raise ValueError with the reason.


class Kind:
    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def format(self, value: Any, width: int) -> str:
        raise NotImplementedError

    def check(self, value: Any, width: int) -> Any:
        raise NotImplementedError


def _printable(text: str) -> None:
    for index, char in enumerate(text):
        if char not in PRINTABLE:
            raise ValueError(
                f"character {char!r} at offset {index + 1} is not printable ASCII "
                "(the standard's alphanumeric set)"
            )


@dataclass(frozen=True)
class Alphanumeric(Kind):
    """Left-justified, space-filled; `required` refuses a blank field (the standard's mandatory
    fields: an account number, a company name)."""

    required: bool = False

    def parse(self, text):
        _printable(text)
        value = text.rstrip(" ")
        if self.required and not value:
            raise ValueError("is blank; the field is mandatory")
        return value

    def format(self, value, width):
        return value.ljust(width)

    def check(self, value, width):
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not text")
        _printable(value)
        # What TX writes is uppercase (module docstring); trailing spaces are the padding.
        value = value.upper().rstrip(" ")
        if len(value) > width:
            raise ValueError(f"{value!r} is {len(value)} characters; the field holds {width}")
        if self.required and not value:
            raise ValueError("is blank; the field is mandatory")
        return value


@dataclass(frozen=True)
class Numeric(Kind):
    """Right-justified, zero-filled, unsigned; `allowed` lists the only values the field may
    hold (service class codes, transaction codes)."""

    allowed: Collection[int] | None = None

    def parse(self, text):
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{text!r} is not numeric (digits only, zero-filled)")
        value = int(text)
        if self.allowed is not None and value not in self.allowed:
            raise ValueError(f"{text!r} is not one of {_listed(self.allowed, len(text))}")
        return value

    def format(self, value, width):
        return str(value).zfill(width)

    def check(self, value, width):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{value!r} is not an integer")
        if value < 0 or value >= 10**width:
            raise ValueError(f"{value} does not fit {width} digits")
        if self.allowed is not None and value not in self.allowed:
            raise ValueError(f"{value} is not one of {_listed(self.allowed, width)}")
        return value


def _listed(allowed: Collection[int], width: int) -> str:
    return ", ".join(str(value).zfill(width) for value in sorted(allowed))


@dataclass(frozen=True)
class Digits(Kind):
    """An identifier of exactly the field's width in digits, kept as text (leading zeros)."""

    def parse(self, text):
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{text!r} is not {len(text)} digits")
        return text

    def format(self, value, width):
        return value

    def check(self, value, width):
        if not (isinstance(value, str) and value.isascii() and value.isdigit()):
            raise ValueError(f"{value!r} is not a string of digits")
        if len(value) != width:
            raise ValueError(f"{value!r} is {len(value)} digits; the field holds {width}")
        return value


def check_routing_number(value: str) -> str:
    """A 9-digit ABA routing number with its check digit right, or ValueError saying why."""
    if not (isinstance(value, str) and len(value) == 9 and value.isascii() and value.isdigit()):
        raise ValueError(f"{value!r} is not a 9-digit routing number")
    expected = rtn.calc_check_digit(value[:8])
    if value[8] != expected:
        raise ValueError(
            f"check digit {value[8]} is wrong for DFI identification {value[:8]} "
            f"(the ABA check digit is {expected})"
        )
    return value


@dataclass(frozen=True)
class Routing(Kind):
    """A routing number: the 8-digit DFI identification and its check digit. `leading_blank`
    for the file header's Immediate Destination, written `bTTTTAAAAC` (a blank, then the 9
    digits) in its 10 positions."""

    leading_blank: bool = False

    def parse(self, text):
        if self.leading_blank:
            if text[0] != " ":
                raise ValueError(f"{text!r} is not a blank followed by a 9-digit routing number")
            text = text[1:]
        return check_routing_number(text)

    def format(self, value, width):
        return f" {value}" if self.leading_blank else value

    def check(self, value, width):
        return check_routing_number(value)


ORIGIN = re.compile(r"[0-9]{9,10}")


@dataclass(frozen=True)
class Origin(Kind):
    """The file header's Immediate Origin: a routing number preceded by a blank, or a 10-digit
    number agreed with the ODFI (often "1" + the originator's tax id), right-justified in 10
    positions. Kept without the leading blank; the check digit of a number agreed with the ODFI
    is not the standard's to require."""

    def parse(self, text):
        value = text[1:] if text[0] == " " else text
        if not ORIGIN.fullmatch(value):
            raise ValueError(f"{text!r} is not a blank and 9 digits, or 10 digits")
        return value

    def format(self, value, width):
        return value.rjust(width)

    def check(self, value, width):
        if not (isinstance(value, str) and ORIGIN.fullmatch(value)):
            raise ValueError(f"{value!r} is not 9 or 10 digits")
        return value


@dataclass(frozen=True)
class Date(Kind):
    """YYMMDD, years 2000-2099; `optional` reads a blank field as None (a date of death)."""

    optional: bool = False

    def parse(self, text):
        if self.optional and text == " " * len(text):
            return None
        try:
            if not (text.isascii() and text.isdigit()):
                raise ValueError
            return datetime.date(2000 + int(text[:2]), int(text[2:4]), int(text[4:6]))
        except ValueError:
            raise ValueError(f"{text!r} is not a date YYMMDD") from None

    def format(self, value, width):
        return " " * width if value is None else value.strftime("%y%m%d")

    def check(self, value, width):
        if value is None and self.optional:
            return None
        if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
            raise ValueError(f"{value!r} is not a date")
        if not 2000 <= value.year <= 2099:
            raise ValueError(f"{value} is outside 2000-2099, which YYMMDD can carry")
        return value


@dataclass(frozen=True)
class DateText(Kind):
    """A YYMMDD date the field may leave out, kept as its text: "" when blank, "000000" as
    written (banks fill an absent date of death with zeros as often as with blanks, and a
    record must re-write as it came). A date given in code is written YYMMDD."""

    def parse(self, text):
        if text == " " * len(text):
            return ""
        if text != "0" * len(text):
            Date().parse(text)
        return text

    def format(self, value, width):
        return value.ljust(width)

    def check(self, value, width):
        if isinstance(value, datetime.date):
            return Date().format(Date().check(value, width), width)
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a date")
        return self.parse(value.ljust(width))


def date_or_none(text: str) -> datetime.date | None:
    """The date of a `DateText` field, None when it is blank or zeros."""
    return Date(optional=True).parse(text.ljust(6).replace("000000", "      "))


@dataclass(frozen=True)
class Time(Kind):
    """HHMM; blank reads as None (the file creation time is optional)."""

    def parse(self, text):
        if text == "    ":
            return None
        try:
            if not (text.isascii() and text.isdigit()):
                raise ValueError
            return datetime.time(int(text[:2]), int(text[2:]))
        except ValueError:
            raise ValueError(f"{text!r} is not a time HHMM") from None

    def format(self, value, width):
        return "    " if value is None else value.strftime("%H%M")

    def check(self, value, width):
        if value is None:
            return None
        if not isinstance(value, datetime.time) or value.second or value.microsecond:
            raise ValueError(f"{value!r} is not a time to the minute")
        return value


@dataclass(frozen=True)
class JulianDay(Kind):
    """A day of the year, 001-366, or blank (None): the settlement dates the ACH Operator
    inserts."""

    def parse(self, text):
        if text == "   ":
            return None
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 366:
            raise ValueError(f"{text!r} is not a day of the year 001-366 or blank")
        return int(text)

    def format(self, value, width):
        return "   " if value is None else str(value).zfill(3)

    def check(self, value, width):
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 366:
            raise ValueError(f"{value!r} is not a day of the year 1-366")
        return value


@dataclass(frozen=True)
class Code(Kind):
    """A code of exactly the field's width: one of `allowed`, or matching `pattern`."""

    allowed: Collection[str] | None = None
    pattern: str | None = None

    def _valid(self, value: str) -> bool:
        if self.allowed is not None:
            return value in self.allowed
        return re.fullmatch(self.pattern or "", value) is not None

    def _expected(self) -> str:
        if self.allowed is not None:
            return "one of " + ", ".join(sorted(self.allowed))
        return f"a code matching {self.pattern}"

    def parse(self, text):
        if not self._valid(text):
            raise ValueError(f"{text!r} is not {self._expected()}")
        return text

    def format(self, value, width):
        return value

    def check(self, value, width):
        if not isinstance(value, str) or len(value) != width or not self._valid(value):
            raise ValueError(f"{value!r} is not {self._expected()}")
        return value


@dataclass(frozen=True)
class Constant(Kind):
    text: str

    def parse(self, text):
        if text != self.text:
            raise ValueError(f"{text!r} is not {self.text!r}")
        return text

    def format(self, value, width):
        return self.text


@dataclass(frozen=True)
class Reserved(Kind):
    """A field the standard reserves: blank, always."""

    def parse(self, text):
        if text != " " * len(text):
            raise ValueError(f"{text!r} is not blank (the field is reserved)")
        return text

    def format(self, value, width):
        return " " * width


# --- layouts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of a layout: the record attribute that holds it (None for a constant or a
    reserved field), its positions (1-based, inclusive) and its name in the standard."""

    name: str | None
    start: int
    end: int
    kind: Kind
    label: str

    @property
    def width(self) -> int:
        return self.end - self.start + 1


def field(name: str, start: int, end: int, kind: Kind, label: str) -> Field:
    return Field(name, start, end, kind, label)


def constant(start: int, end: int, text: str, label: str) -> Field:
    return Field(None, start, end, Constant(text), label)


def reserved(start: int, end: int) -> Field:
    return Field(None, start, end, Reserved(), "reserved")


@dataclass(frozen=True)
class Layout:
    """A record kind's layout: its name and its fields, which tile positions 1-94."""

    record: str
    fields: tuple[Field, ...]

    def __post_init__(self):
        position = 1
        for each in self.fields:
            if each.start != position or each.end < each.start:
                raise ValueError(
                    f"{self.record}: {each.label} starts at {each.start}, not {position}"
                )
            if isinstance(each.kind, Constant) and len(each.kind.text) != each.width:
                raise ValueError(f"{self.record}: {each.label} is not {each.width} characters")
            position = each.end + 1
        if position != RECORD_LENGTH + 1:
            raise ValueError(f"{self.record}: the fields end at {position - 1}, not 94")

    @property
    def attributes(self) -> Iterator[Field]:
        return (each for each in self.fields if each.name is not None)

    def get(self, name: str) -> Field:
        for each in self.fields:
            if each.name == name:
                return each
        raise KeyError(name)

    def error(self, name: str, reason: str, record_number: int | None) -> NachaError:
        """The error of the field `name` of this record kind (for a rule that spans fields)."""
        each = self.get(name)
        return NachaError(
            reason,
            record_number=record_number,
            record=self.record,
            field=each.label,
            positions=(each.start, each.end),
        )

    def parse(self, line: str, record_number: int | None = None) -> dict[str, Any]:
        if len(line) != RECORD_LENGTH:
            raise NachaError(
                f"is {len(line)} characters long; a record has {RECORD_LENGTH}",
                record_number=record_number,
                record=self.record,
            )
        values = {}
        for each in self.fields:
            try:
                value = each.kind.parse(line[each.start - 1 : each.end])
            except ValueError as error:
                raise NachaError(
                    str(error),
                    record_number=record_number,
                    record=self.record,
                    field=each.label,
                    positions=(each.start, each.end),
                ) from None
            if each.name is not None:
                values[each.name] = value
        return values

    def format(self, record: Any) -> str:
        return "".join(
            each.kind.format(None if each.name is None else getattr(record, each.name), each.width)
            for each in self.fields
        )


class Record:
    """The base of every record kind: a frozen dataclass whose attributes are its layout's
    named fields.

    Made in code, a record checks every value when it is made (`ValueError` naming the field)
    and holds it as it will be written (alphanumeric values uppercased). Read from a line
    (`from_line`), it holds exactly what the line holds, so `from_line(line).to_line() == line`
    for every line the parser accepts.
    """

    __slots__ = ()
    LAYOUT: ClassVar[Layout]

    def __post_init__(self):
        for each in self.LAYOUT.attributes:
            value = getattr(self, each.name)
            try:
                checked = each.kind.check(value, each.width)
            except ValueError as error:
                raise NachaError(
                    str(error),
                    record=self.LAYOUT.record,
                    field=each.label,
                    positions=(each.start, each.end),
                ) from None
            if checked is not value:
                object.__setattr__(self, each.name, checked)
        for name, reason in self.rules(self._values()):
            raise self.LAYOUT.error(name, reason, None)

    def _values(self) -> dict[str, Any]:
        return {each.name: getattr(self, each.name) for each in self.LAYOUT.attributes}

    @classmethod
    def rules(cls, values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
        """The record's own rules across its fields: (field name, reason) for each broken."""
        return iter(())

    def to_line(self) -> str:
        return self.LAYOUT.format(self)

    @classmethod
    def from_line(cls, line: str, record_number: int | None = None):
        values = cls.LAYOUT.parse(line, record_number)
        for name, reason in cls.rules(values):
            raise cls.LAYOUT.error(name, reason, record_number)
        # The line's values as they are: not through __init__, which would uppercase them.
        record = object.__new__(cls)
        for name, value in values.items():
            object.__setattr__(record, name, value)
        return record

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)
