"""The value rules shared by every message's writer and reader: amounts, dates and times,
IBANs and BICs, identifiers and free text.

The XSD says an element's shape (a BIC's pattern, an IBAN's letters and digits, a decimal's
digits); these rules say what it cannot: an IBAN's mod-97 check digits and a BIC's structure
(python-stdnum, `stdnum.iban`, `stdnum.bic`), a creditor reference's ISO 11649 check digits
(`stdnum.iso11649`), an amount in whole cents. A model checks its values when it is made, so a
message built in code and a message read from a file pass the same rules.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation

from stdnum import bic as stdnum_bic
from stdnum import iban as stdnum_iban
from stdnum import iso11649
from stdnum.eu import at_02 as stdnum_at_02
from stdnum.exceptions import ValidationError

from payments.iso20022.errors import Iso20022Error

# The SEPA schemes are euro-only (EPC rulebooks: "Only 'EUR' is allowed").
EUR = "EUR"
# The EPC's largest amount of one transaction, in cents (999 999 999.99 EUR).
MAX_CENTS = 99_999_999_999

# The characters the EPC guidelines allow in the identifiers a SEPA message carries (message,
# payment information and end-to-end ids): the Latin character set of the SEPA schemes. An
# identifier may not start or end with "/" nor hold "//" (EPC132-08 and EPC115-06, "Character
# set"). TX applies it to the identifiers it makes; an identifier read from a bank's file is
# kept as the XSD allows (Max35Text).
_SEPA_ID = re.compile(r"[A-Za-z0-9/\-?:().,'+ ]{1,35}")


def check_amount(cents: int, what: str = "amount") -> int:
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise Iso20022Error(f"{what}: {cents!r} is not a whole number of cents")
    if not 1 <= cents <= MAX_CENTS:
        raise Iso20022Error(f"{what}: {cents} cents is outside 0.01-999999999.99")
    return cents


def amount_text(cents: int) -> str:
    """Cents as the decimal the XSD takes, always two places: 1234 -> "12.34"."""
    return f"{cents // 100}.{cents % 100:02d}"


def parse_amount(text: str, what: str = "amount") -> int:
    """A decimal of the document as cents; refused when it holds a fraction of a cent (the XSD
    allows 5 decimals; the euro has 2 and TX counts in cents)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise Iso20022Error(f"{what}: {text!r} is not an amount") from None
    cents = value * 100
    if cents != cents.to_integral_value():
        raise Iso20022Error(f"{what}: {text} holds a fraction of a cent")
    return int(cents)


def check_currency(currency: str, what: str = "currency") -> str:
    if currency != EUR:
        raise Iso20022Error(f"{what}: {currency!r} is not EUR, the only currency of SEPA")
    return currency


def check_iban(value: str, what: str = "IBAN") -> str:
    """The IBAN in its electronic form (no spaces, uppercase), its check digits verified."""
    try:
        return stdnum_iban.validate(value)
    except ValidationError as error:
        raise Iso20022Error(f"{what}: {value!r} is not a valid IBAN ({error})") from None


def check_bic(value: str, what: str = "BIC") -> str:
    try:
        return stdnum_bic.validate(value)
    except ValidationError as error:
        raise Iso20022Error(f"{what}: {value!r} is not a valid BIC ({error})") from None


def check_creditor_reference(value: str, what: str = "creditor reference") -> str:
    """An ISO 11649 structured creditor reference (RF + 2 check digits + up to 21 characters)."""
    try:
        return iso11649.validate(value)
    except ValidationError as error:
        raise Iso20022Error(f"{what}: {value!r} is not an ISO 11649 reference ({error})") from None


def check_sepa_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not _SEPA_ID.fullmatch(value):
        raise Iso20022Error(
            f"{what}: {value!r} must be 1-35 characters of the SEPA set "
            "(A-Z a-z 0-9 / - ? : ( ) . , ' + space)"
        )
    if value.startswith("/") or value.endswith("/") or "//" in value:
        raise Iso20022Error(f"{what}: {value!r} may not start or end with '/' nor hold '//'")
    return value


def check_text(value: str, limit: int, what: str) -> str:
    """Free text (a name, remittance information): 1 to `limit` characters, no control
    characters. Characters outside the SEPA Latin set are kept: transliterating a name is the
    caller's choice, not the format's."""
    if not isinstance(value, str) or not value.strip():
        raise Iso20022Error(f"{what}: is blank")
    if len(value) > limit:
        raise Iso20022Error(f"{what}: is {len(value)} characters; at most {limit}")
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in value):
        raise Iso20022Error(f"{what}: {value!r} holds a control character")
    return value


def datetime_text(moment: datetime.datetime, *, milliseconds: bool = False) -> str:
    if moment.tzinfo is None:
        raise Iso20022Error(f"{moment!r} has no time zone; TX writes every time with its offset")
    return moment.isoformat(timespec="milliseconds" if milliseconds else "seconds")


def parse_datetime(text: str, what: str) -> datetime.datetime:
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        raise Iso20022Error(f"{what}: {text!r} is not a date and time") from None


def parse_date(text: str, what: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise Iso20022Error(f"{what}: {text!r} is not a date") from None


def check_creditor_identifier(value: str, what: str = "creditor identifier") -> str:
    """The SEPA creditor identifier (AT-02: country, 2 check digits, a 3-character business code
    and the national identifier), its ISO 7064 mod 97-10 check digits verified
    (python-stdnum `stdnum.eu.at_02`); kept in its electronic form."""
    try:
        return stdnum_at_02.validate(value)
    except ValidationError as error:
        raise Iso20022Error(
            f"{what}: {value!r} is not a SEPA creditor identifier ({error})"
        ) from None
