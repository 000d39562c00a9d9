"""What no single-line text the service stores may hold (names, addresses, descriptions,
reasons, client metadata): they end up in card-network messages, statements, log lines and
admin pages. `api.serializers` refuses them in every text field of the API; `core.metadata` in
metadata keys and values. Free text staff write (notes) holds no card or account number
(`has_card_or_account_number`)."""

import re

from stdnum import luhn

# C0 controls (NUL, TAB, CR and LF included), DEL and C1 controls; lone surrogates (not Unicode
# text: PostgreSQL cannot store them); the line and paragraph separators; the bidirectional
# embedding, override and isolate controls, which reorder what a reader sees ("Trojan source").
FORBIDDEN_CHARACTERS = re.compile(
    r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
CONTROL_CHARACTER_MESSAGE = (
    "Must not contain control characters (such as NUL, tab or a line break)."
)

# --- Card and account numbers in free text ------------------------------------------------------
# Staff notes (backoffice.services.cases) never hold one: a PAN is 13 to 19 digits, an account
# number 12 (`accounts.services.accounts.ACCOUNT_NUMBER_DIGITS`), both with a Luhn check digit.
# People write them whole or in groups ("4111 1111 1111 1111", "4111-1111-..."): the groups of
# digits split by one space or dash are read together, and every run of whole groups is tried.
NUMBER_DIGITS = (12, 19)
DIGIT_GROUPS = re.compile(r"\d+(?:[ -]\d+)*")


def has_card_or_account_number(text: str) -> bool:
    """Whether `text` holds a number that could be a card number (PAN) or an account number: a
    run of whole digit groups with 12 to 19 digits in all and a valid Luhn check digit. A
    number with one digit wrong passes (as it would pass the card network's own check: it is
    no card's); so may a phone number, one time in ten: staff write the last four instead."""
    shortest, longest = NUMBER_DIGITS
    for match in DIGIT_GROUPS.finditer(text):
        groups = re.split(r"[ -]", match.group())
        for first in range(len(groups)):
            digits = ""
            for group in groups[first:]:
                digits += group
                if len(digits) > longest:
                    break
                if len(digits) >= shortest and luhn.is_valid(digits):
                    return True
    return False
