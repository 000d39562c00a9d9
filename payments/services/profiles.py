"""An institution's ACH profile set by its operators (`manage.py ach_profile`; docs/payments.md,
"The ACH profile"): its sponsor bank's details, its cut-offs and its limits. Checked whole
before anything is stored: a routing number with a wrong check digit, a name NACHA cannot
carry or a cut-off that is not a time is 400 `validation_error` naming the field, and the
profile is as it was. Its SEPA profile likewise (`manage.py sepa_profile`; "The SEPA
profile")."""

import re

from django.db import IntegrityError, transaction

from core.exceptions import ValidationFailed
from core.operations import Outcome, changed, unchanged
from core.rows import row_update
from institutions.models import Institution

from .. import account_ibans, sepa
from ..locks import lock_ach_profile, lock_sepa_profile
from ..models import AchProfile, SepaProfile
from .external_accounts import checked_routing_number

TIME = re.compile(r"\A([01][0-9]|2[0-3]):[0-5][0-9]\Z")
DIGITS_10 = re.compile(r"\A[0-9A-Z ]{10}\Z")
# NACHA's alphanumeric fields take printable ASCII; the names are written uppercase.
NAMES = {"odfi_name": 23, "destination_name": 23, "company_name": 16}
ROUTING = ("odfi_routing_number", "destination_routing_number", "receiving_routing_number")
REQUIRED = (*ROUTING, *NAMES, "company_id")
OPTIONAL = (
    "next_day_cutoff",
    "same_day_cutoffs",
    "same_day_limit",
    "require_verified",
    "debit_hold_days",
    "approval_above",
)


def _errors(values: dict) -> dict:
    errors = {}
    for field in ROUTING:
        if field in values:
            try:
                checked_routing_number(values[field], field)
            except ValidationFailed as refused:
                errors.update(refused.details)
    for field, most in NAMES.items():
        value = values.get(field)
        if field in values and not (
            isinstance(value, str)
            and 0 < len(value.strip()) <= most
            and all(32 <= ord(char) < 127 for char in value)
        ):
            errors[field] = f"Must be 1 to {most} printable ASCII characters."
    if "company_id" in values and not (
        isinstance(values["company_id"], str) and DIGITS_10.match(values["company_id"])
    ):
        errors["company_id"] = "Must be 10 characters: digits, capitals or spaces (a TIN is 1 + 9)."
    if "next_day_cutoff" in values and not TIME.match(str(values["next_day_cutoff"])):
        errors["next_day_cutoff"] = "Must be a local time HH:MM."
    if "same_day_cutoffs" in values:
        windows = values["same_day_cutoffs"]
        if not (
            isinstance(windows, list)
            and len(windows) <= 3
            and all(isinstance(each, str) and TIME.match(each) for each in windows)
            and windows == sorted(set(windows))
        ):
            errors["same_day_cutoffs"] = "Must be up to 3 local times HH:MM, in order."
    for field in ("same_day_limit", "approval_above"):
        value = values.get(field)
        if value is not None and not (isinstance(value, int) and 0 < value <= 10**15):
            errors[field] = "Must be an amount in cents above 0."
    if "require_verified" in values and not isinstance(values["require_verified"], bool):
        errors["require_verified"] = "Must be true or false."
    if "debit_hold_days" in values and values["debit_hold_days"] not in range(0, 61):
        errors["debit_hold_days"] = "Must be 0 to 60 banking days."
    return errors


def ach_profile_set(*, institution: Institution, **values) -> Outcome[AchProfile]:
    """Create the institution's profile (every field of REQUIRED given) or change the fields
    given; names are kept as given and written uppercase in files."""
    unknown = set(values) - {*REQUIRED, *OPTIONAL}
    if unknown:
        raise ValidationFailed(details={field: "Not a field of the profile." for field in unknown})
    errors = _errors(values)
    with transaction.atomic(savepoint=False):
        profile = lock_ach_profile(institution.pk)
        if profile is None:
            missing = [field for field in REQUIRED if field not in values]
            errors.update({field: "Required for a new profile." for field in missing})
        if errors:
            raise ValidationFailed(details=errors)
        if profile is None:
            profile = AchProfile.objects.create(institution=institution, **values)
            return changed(profile, {})
        previous = row_update(profile, values)
    return changed(profile, previous) if previous else unchanged(profile)


SEPA_REQUIRED = ("kind", "bic")
SEPA_OPTIONAL = (
    "settlement_iban",
    "creditor_identifier",
    "credit_transfer_cutoff",
    "direct_debit_cutoff",
    "require_verified",
    "approval_above",
    "pre_notification_days",
    "debit_hold_days",
    "iban_country",
    "iban_bank_code",
)
IBAN_BANK = ("iban_country", "iban_bank_code")


def _sepa_errors(values: dict) -> dict:
    errors = {}
    if "kind" in values and values["kind"] not in SepaProfile.Kind.values:
        errors["kind"] = "Must be initiation or interbank."
    for field, check in (
        ("bic", sepa.checked_bic),
        ("settlement_iban", sepa.checked_iban),
        ("creditor_identifier", sepa.checked_creditor_identifier),
    ):
        if values.get(field):
            try:
                values[field] = check(values[field], field)
            except ValidationFailed as refused:
                errors.update(refused.details)
    for field in ("credit_transfer_cutoff", "direct_debit_cutoff"):
        if field in values and not TIME.match(str(values[field])):
            errors[field] = "Must be a local time HH:MM."
    value = values.get("approval_above")
    if value is not None and not (isinstance(value, int) and 0 < value <= 10**15):
        errors["approval_above"] = "Must be an amount in cents above 0."
    if "require_verified" in values and not isinstance(values["require_verified"], bool):
        errors["require_verified"] = "Must be true or false."
    # The rulebook's 14 calendar days hold unless creditor and debtor agree otherwise; a
    # notice on the due date itself is no notice.
    if "pre_notification_days" in values and values["pre_notification_days"] not in range(1, 61):
        errors["pre_notification_days"] = "Must be 1 to 60 calendar days."
    if "debit_hold_days" in values and values["debit_hold_days"] not in range(0, 61):
        errors["debit_hold_days"] = "Must be 0 to 60 banking days."
    return errors


def sepa_profile_set(*, institution: Institution, **values) -> Outcome[SepaProfile]:
    """Create the institution's SEPA profile (`kind` and `bic` given, and `settlement_iban` for
    `initiation`) or change the fields given. The BIC, IBAN and creditor identifier are checked
    by their check digits and kept in their electronic form (uppercase, no spaces). The country
    and bank code its accounts' IBANs are issued under (`payments.account_ibans`) are set
    together, once: no other institution's, and never changed after (its customers have given
    their IBANs out)."""
    unknown = set(values) - {*SEPA_REQUIRED, *SEPA_OPTIONAL}
    if unknown:
        raise ValidationFailed(details={field: "Not a field of the profile." for field in unknown})
    values = dict(values)
    errors = _sepa_errors(values)
    with transaction.atomic(savepoint=False):
        profile = lock_sepa_profile(institution.pk)
        if profile is None:
            missing = [field for field in SEPA_REQUIRED if field not in values]
            errors.update({field: "Required for a new profile." for field in missing})
        kind = values.get("kind", profile.kind if profile else None)
        iban = values.get("settlement_iban", profile.settlement_iban if profile else "")
        if kind == SepaProfile.Kind.INITIATION and not iban and "settlement_iban" not in errors:
            errors["settlement_iban"] = "Required for an initiation profile (its account there)."
        if any(field in values for field in IBAN_BANK):
            errors.update(_iban_bank_errors(institution, profile, values))
        if errors:
            raise ValidationFailed(details=errors)
        try:
            with transaction.atomic():
                if profile is None:
                    profile = SepaProfile.objects.create(institution=institution, **values)
                    return changed(profile, {})
                previous = row_update(profile, values)
        except IntegrityError as error:  # two institutions took the bank code at once
            if "sepa_profile_iban_bank_once" not in str(error):
                raise
            raise ValidationFailed(
                details={"iban_bank_code": "Another institution's IBANs are issued under it."}
            ) from None
    return changed(profile, previous) if previous else unchanged(profile)


def _iban_bank_errors(institution: Institution, profile: SepaProfile | None, values) -> dict:
    for field in IBAN_BANK:
        if field in values:
            values[field] = str(values[field] or "").replace(" ", "").upper()
    country = values.get("iban_country", profile.iban_country if profile else "")
    code = values.get("iban_bank_code", profile.iban_bank_code if profile else "")
    if profile is not None and profile.iban_bank_code:
        if (country, code) != (profile.iban_country, profile.iban_bank_code):
            return {"iban_bank_code": "Set once: its accounts' IBANs are given out already."}
        return {}
    if bool(country) != bool(code):
        return {"iban_bank_code": "The IBANs' country and bank code go together."}
    errors = account_ibans.iban_bank_errors(country, code)
    taken = (
        SepaProfile.objects.filter(iban_country=country, iban_bank_code=code)
        .exclude(institution=institution)
        .exists()
    )
    if not errors and code and taken:
        errors["iban_bank_code"] = "Another institution's IBANs are issued under it."
    return errors
