"""The IBANs of the institution's own accounts (docs/payments.md, "Inbound SEPA"), as a partner
bank issues virtual IBANs to a fintech: the profile's country and bank code (`SepaProfile.
iban_country`, `iban_bank_code`: the BBAN's bank and, where the country has one, branch), the
account's number zero-padded to the country's account field, and ISO 13616's check digits
(python-stdnum's `iban`, mod 97).

**Computed, not stored.** An account's IBAN is a function of its number and its institution's
profile, so there is nothing to keep in step (an account opened before the profile has one the
moment the profile has a bank code), and the way back is as cheap: an IBAN's country and bank
code find the profile (its unique index `sepa_profile_iban_bank_once`), its account field the
account (`account_number_unique`, the institution and the number): two index lookups, no scan.

Only an active, frozen or closed **customer account in EUR** has one (SEPA moves euros; the
inbound paths tell closed and frozen apart by it). The IBAN is a sensitive identifier, as the
account number is: shown in the API's bodies where the number is, never logged, never in an
error, an event or the back office.

**The countries.** An account number is 12 digits (`accounts.services.accounts`), so the
country's account field must be at least as wide, and hold no national check digit TX would
have to compute: the SEPA euro countries whose BBAN is a bank code and a wide plain account
field, by the IBAN registry's formats (python-stdnum's `iban.dat`). Germany's 10-digit account
field, or France's and Italy's national check keys, are not among them.
"""

from stdnum import iban as stdnum_iban

from accounts.models import Account
from institutions.models import Institution

from .models import SepaProfile
from .sepa import EUR

# Country: (the bank code's length, the account field's width). The registry's BBANs:
# LU 3!n13!c, CY 3!n5!n16!c, GR 3!n4!n16!c, MT 4!a5!n18!c, LV 4!a13!c.
ISSUING = {"LU": (3, 13), "CY": (8, 16), "GR": (7, 16), "MT": (9, 18), "LV": (4, 13)}
ACCOUNT_DIGITS = 12
# What has an IBAN: a customer account in EUR (its status aside).
_HOLDERS = {"kind": Account.Kind.CUSTOMER, "currency": EUR}


def iban_bank_errors(country: str, bank_code: str) -> dict:
    """What is wrong with a profile's `iban_country` and `iban_bank_code` (both given, or both
    blank); {} when they make valid IBANs."""
    if not country and not bank_code:
        return {}
    if country not in ISSUING:
        return {
            "iban_country": "A country whose IBANs carry TX's 12-digit account numbers: "
            + ", ".join(sorted(ISSUING))
            + "."
        }
    length, _ = ISSUING[country]
    sample = _iban(country, bank_code, "0" * ACCOUNT_DIGITS)
    if len(bank_code) != length or not stdnum_iban.is_valid(sample):
        return {"iban_bank_code": f"Must be the {length} characters of the country's bank code."}
    return {}


def _iban(country: str, bank_code: str, number: str) -> str:
    bban = bank_code + number.zfill(ISSUING[country][1])
    return country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban


def account_iban(account: Account, profile: SepaProfile | None) -> str | None:
    """The IBAN of `account` under its institution's `profile`; None when the profile issues
    none or the account has none (not a customer account in EUR)."""
    if (
        profile is None
        or not profile.iban_bank_code
        or account.kind != Account.Kind.CUSTOMER
        or account.currency != EUR
        or not account.account_number
        or len(account.account_number) > ISSUING[profile.iban_country][1]
    ):
        return None
    return _iban(profile.iban_country, profile.iban_bank_code, account.account_number)


def registered_iban(account: Account, memo: dict) -> str | None:
    """`account_iban` as `accounts.ibans` calls it: the profile of each institution read once
    per `memo` (one response)."""
    key = ("sepa_profile", account.institution_id)
    if key not in memo:
        memo[key] = _profile_read_with(account)
        if memo[key] is NOT_READ:
            memo[key] = SepaProfile.objects.filter(institution_id=account.institution_id).first()
    return account_iban(account, memo[key])


NOT_READ = object()


def _profile_read_with(account: Account):
    """The profile the account's own query joined (`accounts.selectors.account_get`: the
    `related` this module registers), None when the institution has none, NOT_READ when the
    query did not join it (a list of accounts: one query per response then)."""
    if not Account.institution.is_cached(account):
        return NOT_READ
    institution = account.institution
    if not Institution.sepa_profile.is_cached(institution):
        return NOT_READ
    return getattr(institution, "sepa_profile", None)


def profile_of_iban(iban: str) -> SepaProfile | None:
    """The SEPA profile whose bank code an IBAN (checked, electronic form) carries, if any."""
    found = ISSUING.get(iban[:2])
    if found is None:
        return None
    code = iban[4 : 4 + found[0]]
    return (
        SepaProfile.objects.filter(iban_country=iban[:2], iban_bank_code=code)
        .select_related("institution")
        .first()
    )


def account_of_iban(profile: SepaProfile, iban: str) -> Account | None:
    """The account of `profile`'s institution an IBAN (checked, electronic form) names: None
    when it is not of the profile's bank code, or no customer account in EUR has its number.
    Another institution's IBAN is none of this one's."""
    if not profile.iban_bank_code or iban[:2] != profile.iban_country:
        return None
    bban = iban[4:]
    if not bban.startswith(profile.iban_bank_code):
        return None
    field = bban[len(profile.iban_bank_code) :]
    number = field[-ACCOUNT_DIGITS:]
    if field[:-ACCOUNT_DIGITS].strip("0") or not number.isdigit():
        return None
    return Account.objects.filter(
        institution_id=profile.institution_id, account_number=number, **_HOLDERS
    ).first()
