"""What SEPA's fields may hold (docs/payments.md, "External accounts" and "Payment orders"):
IBANs, BICs, the EPC's character set, end-to-end ids and creditor references, each checked by
a well-kept library where one exists (python-stdnum: `iban`, `bic`, `iso11649`, `eu.at_02`)
and refused with a message that never repeats the value (an IBAN is a sensitive identifier:
not in an error, a log line or an event).

The **character set** is the EPC's basic Latin one (EPC217-08, "SEPA Requirements for an
Extended Character Set", and every EPC implementation guideline, section 1.4): the letters
a-z and A-Z, the digits, space and `/ - ? : ( ) . , ' +`. It is the one every SEPA bank must
carry, so what TX stores is what goes into the file, byte for byte, and what comes back: text
outside it (an accent, `&`, `_`) is refused, not transliterated; that is the caller's choice,
as for NACHA's files. Identifiers (the end-to-end id) must also neither start nor end with `/`
nor contain `//`.

The **SEPA countries** are the geographical scope of the EPC's schemes (EPC409-09, "EPC List
of SEPA Scheme Countries"): the 27 member states of the EU, Iceland, Liechtenstein, Norway,
Switzerland, the United Kingdom, Monaco, San Marino, Andorra, the Vatican City State, Albania
and Montenegro (admitted November 2024), Moldova and North Macedonia (March 2025) and Serbia
(May 2025): 41. Their territories bank under their IBANs (Åland's are Finnish, the French
overseas departments' French, Guernsey's, Jersey's and the Isle of Man's British), except
Gibraltar, whose IBANs start with GI.
"""

import re

import pycountry
from stdnum import bic as stdnum_bic
from stdnum import iban as stdnum_iban
from stdnum import iso11649
from stdnum.eu import at_02
from stdnum.exceptions import ValidationError
from stdnum.iso7064 import mod_97_10

from core.exceptions import ValidationFailed

EUR = "EUR"
SEPA_IBAN_COUNTRIES = frozenset(
    {
        # The EU's 27.
        "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU",
        "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
        # The EEA's, and the others.
        "IS", "LI", "NO", "CH", "GB", "MC", "SM", "AD", "VA", "AL", "ME", "MD", "MK", "RS",
        # A territory with IBANs of its own.
        "GI",
    }
)  # fmt: skip

LATIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ ")
LATIN_MESSAGE = (
    "Only the SEPA character set: letters a-z and A-Z, digits, space and / - ? : ( ) . , ' +."
)
MAX_END_TO_END_ID = 35
MAX_REMITTANCE = 140  # an unstructured remittance information (`Ustrd`)
MAX_HOLDER_NAME = 70  # a party's name in the EPC's guidelines
# The shape of an IBAN in its electronic form (ISO 13616: country, check digits, BBAN).
IBAN_SHAPE = re.compile(r"\A[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}\Z")
BIC_SHAPE = re.compile(r"\A[A-Z0-9]{8}([A-Z0-9]{3})?\Z")


def _string(value, field: str) -> str:
    if not isinstance(value, str):
        raise ValidationFailed(details={field: "Must be a string."})
    return value


def checked_iban(value, field: str = "iban") -> str:
    """An IBAN of a SEPA country in its electronic form (spaces of the printed form removed,
    letters uppercased): its shape, its ISO 13616 check digits (mod 97), its country's length
    and format, and its country's national check where it has one. 400 on `field` otherwise,
    never with the value."""
    iban = _string(value, field).replace(" ", "").upper()
    if not IBAN_SHAPE.match(iban):
        raise ValidationFailed(
            details={
                field: "Must be an IBAN: the 2 letters of its country, 2 check digits and 11 "
                "to 30 letters or digits (spaces allowed between them)."
            }
        )
    if not mod_97_10.is_valid(iban[4:] + iban[:4]):
        raise ValidationFailed(details={field: "Its check digits do not match (mod 97)."})
    try:
        stdnum_iban.validate(iban)
    except stdnum_iban.InvalidComponent:
        raise ValidationFailed(
            details={field: "No country has IBANs with its first 2 letters."}
        ) from None
    except ValidationError:
        raise ValidationFailed(
            details={field: "Not the length, format or national check of its country's IBANs."}
        ) from None
    if iban[:2] not in SEPA_IBAN_COUNTRIES:
        raise ValidationFailed(details={field: "An IBAN of a SEPA country: SEPA reaches no other."})
    return iban


def iban_country_numeric(iban: str) -> str:
    """The ISO 3166-1 numeric code of a checked IBAN's country."""
    return pycountry.countries.get(alpha_2=iban[:2]).numeric


def checked_bic(value, field: str = "bic") -> str:
    """A BIC (ISO 9362): 8 or 11 letters and digits, its country a real one; uppercased."""
    bic = _string(value, field).upper()
    try:
        if not BIC_SHAPE.match(bic):
            raise ValidationError
        return stdnum_bic.validate(bic)
    except ValidationError:
        raise ValidationFailed(
            details={
                field: "Must be a BIC: 4 letters of the bank, 2 of its country, 2 letters or "
                "digits of its location and, optionally, 3 of its branch."
            }
        ) from None


def checked_creditor_identifier(value, field: str = "creditor_identifier") -> str:
    """A SEPA creditor identifier (EPC262-08; python-stdnum's `eu.at_02`), uppercased."""
    identifier = _string(value, field).replace(" ", "").upper()
    if not at_02.is_valid(identifier):
        raise ValidationFailed(details={field: "Must be a SEPA creditor identifier."})
    return identifier


def checked_text(value, field: str, most: int, *, required: bool = False) -> str:
    """Text of a SEPA message: at most `most` characters of the SEPA character set, kept as
    given (never trimmed or uppercased: it is what the payee reads)."""
    if value is None:
        value = ""
    value = _string(value, field)
    if required and not value.strip():
        raise ValidationFailed(details={field: "This field is required."})
    if len(value) > most:
        raise ValidationFailed(details={field: f"At most {most} characters."})
    if any(char not in LATIN for char in value):
        raise ValidationFailed(details={field: LATIN_MESSAGE})
    return value


def checked_mandate_reference(value, field: str = "mandate_reference") -> str:
    """A mandate reference (AT-01): the EPC's rule for identifiers (`checked_end_to_end_id`)."""
    return checked_end_to_end_id(value, field)


def checked_end_to_end_id(value, field: str = "end_to_end_id") -> str:
    """1 to 35 characters of the SEPA character set, neither starting nor ending with `/` or a
    space, without `//` (the EPC's rule for references and identifiers)."""
    value = checked_text(value, field, MAX_END_TO_END_ID, required=True)
    if value != value.strip() or value.startswith("/") or value.endswith("/") or "//" in value:
        raise ValidationFailed(
            details={
                field: "An identifier neither starts nor ends with '/' or a space, and has no '//'."
            }
        )
    return value


def checked_creditor_reference(value, field: str = "creditor_reference") -> str:
    """A structured creditor reference (ISO 11649: "RF", 2 check digits, up to 21 letters or
    digits) in its electronic form (spaces removed, uppercased), its check digits holding."""
    reference = _string(value, field).replace(" ", "").upper()
    if not re.fullmatch(r"RF[0-9]{2}[A-Z0-9]{1,21}", reference):
        raise ValidationFailed(
            details={
                field: "Must be an ISO 11649 creditor reference: RF, 2 check digits and 1 to "
                "21 letters or digits."
            }
        )
    if not iso11649.is_valid(reference):
        raise ValidationFailed(details={field: "Its check digits do not match (ISO 11649)."})
    return reference
