"""External accounts: a customer's (or the institution's own) account at another bank, which
payment orders pay to or collect from (docs/payments.md, "External accounts").

An ACH external account has a routing number (nine digits whose ABA check digit holds:
python-stdnum's `us.rtn`), an account number (4 to 17 digits: NACHA's DFI account number field;
a sensitive identifier, encrypted, shown by its last four, never in a URL, an event or a log
line) and a type (checking or savings: the entry's transaction code). It is a US account in
USD: ACH reaches no other.

A SEPA external account (`sepa_external_account_create`) has an IBAN (of a SEPA country, its
mod 97 check digits, length and format checked by python-stdnum: `payments.sepa`; as sensitive
as an account number, sealed and shown by its last four) and, optionally, its bank's BIC. Its
country is its IBAN's, its currency EUR, its holder's name at most 70 characters of the SEPA
character set (what the file carries). It is verified by staff (SEPA has no prenote).

It is `unverified` when made. A **prenote** (a zero-amount entry to it,
`external_account_prenote`) makes it `verifying`; the prenote's return window passing with no
return makes it `verified`, a return makes it `failed` (`payments.services.orders`). Staff may
verify it by other means (`external_account_verify`). A notification of change (C01-C14) corrects
it (`external_account_correct`).
"""

import re

from django.db import transaction
from django.utils import timezone
from stdnum.us import rtn

from core.actors import Actor
from core.exceptions import InvalidStateTransition, ValidationFailed
from core.metadata import metadata_check, metadata_merge
from core.operations import Outcome, changed, unchanged
from core.rows import new_row, row_update
from customers.selectors import customer_get
from events.services import emit_for
from institutions.models import Institution

from .. import sepa
from ..locks import lock_external_account
from ..models import ExternalAccount

US = "840"
USD = "USD"
ACCOUNT_NUMBER = re.compile(r"\A[0-9]{4,17}\Z")
MAX_HOLDER_NAME = 140
UPDATABLE = frozenset({"holder_name", "metadata"})


def checked_routing_number(value, field: str = "routing_number") -> str:
    """Nine digits with their ABA check digit, or 400 on `field`."""
    if not isinstance(value, str) or not rtn.is_valid(value) or len(value) != 9:
        raise ValidationFailed(details={field: "Must be a 9-digit ABA routing number."})
    return value


def _holder_name(value, kind: str = ExternalAccount.Kind.ACH) -> str:
    if kind == ExternalAccount.Kind.SEPA:
        return sepa.checked_text(value, "holder_name", sepa.MAX_HOLDER_NAME, required=True).strip()
    if not isinstance(value, str) or not 0 < len(value.strip()) <= MAX_HOLDER_NAME:
        raise ValidationFailed(
            details={"holder_name": f"Must be 1 to {MAX_HOLDER_NAME} characters."}
        )
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValidationFailed(details={"holder_name": "Must have no control characters."})
    return value.strip()


def _event_data(external: ExternalAccount) -> dict:
    # Never the account number or IBAN; its last four, as staff and clients see it.
    if external.kind == ExternalAccount.Kind.SEPA:
        return {
            "external_account_id": external.pk,
            "customer_id": external.customer_id,
            "kind": external.kind,
            "iban_last4": external.sepa_iban_last4,
            "bic": external.sepa_bic,
            "status": external.status,
        }
    return {
        "external_account_id": external.pk,
        "customer_id": external.customer_id,
        "routing_number": external.ach_routing_number,
        "account_number_last4": external.ach_account_number_last4,
        "account_type": external.ach_account_type,
        "status": external.status,
    }


def external_account_create(
    *,
    institution: Institution,
    customer_id: str | None,
    holder_name: str,
    country_code: str,
    currency: str,
    routing_number: str,
    account_number: str,
    account_type: str,
    metadata: dict | None = None,
    actor: Actor,
) -> ExternalAccount:
    """A new `unverified` ACH external account of the customer (404 when not the
    institution's) or, `customer_id` None, of the institution. 400 for a routing number whose
    check digit fails, an account number that is not 4 to 17 digits, a country other than the
    United States (840) or a currency other than USD (ACH reaches US accounts only), a type
    other than checking or savings. Emits `external_account.created`."""
    customer = None
    if customer_id is not None:
        customer = customer_get(institution=institution, customer_id=customer_id)
    errors = {}
    if country_code != US:
        errors["country_code"] = "ACH reaches accounts in the United States (840) only."
    if currency != USD:
        errors["currency"] = "ACH moves USD only."
    if not isinstance(account_number, str) or not ACCOUNT_NUMBER.match(account_number):
        errors["account_number"] = "Must be 4 to 17 digits."
    if account_type not in ExternalAccount.AccountType.values:
        errors["account_type"] = "Must be checking or savings."
    if errors:
        raise ValidationFailed(details=errors)
    holder_name = _holder_name(holder_name)
    routing_number = checked_routing_number(routing_number)
    external = new_row(
        ExternalAccount,
        institution=institution,
        customer=customer,
        kind=ExternalAccount.Kind.ACH,
        holder_name=holder_name,
        country_code=country_code,
        currency=currency,
        ach_routing_number=routing_number,
        ach_account_type=account_type,
        metadata=metadata_check(metadata or {}),
        **actor.stamp("created_by"),
    )
    for field, value in external.sealed_account_number(account_number).items():
        setattr(external, field, value)
    with transaction.atomic(savepoint=False):
        external.save(force_insert=True)
        emit_for(external, "external_account.created", data=_event_data(external))
    return external


def sepa_external_account_create(
    *,
    institution: Institution,
    customer_id: str | None,
    holder_name: str,
    country_code: str,
    currency: str,
    iban: str,
    bic: str | None = None,
    metadata: dict | None = None,
    actor: Actor,
) -> ExternalAccount:
    """A new `unverified` SEPA external account of the customer (404 when not the
    institution's) or, `customer_id` None, of the institution. 400 for an IBAN that is not one
    (its check digits, its country's length and format) or not of a SEPA country, a country
    other than the IBAN's, a currency other than EUR, a BIC that is not one, a holder name
    SEPA cannot carry; the IBAN never in the error. Emits `external_account.created` (the
    IBAN's last four only)."""
    customer = None
    if customer_id is not None:
        customer = customer_get(institution=institution, customer_id=customer_id)
    errors = {}
    checked = None
    try:
        checked = sepa.checked_iban(iban, "sepa.iban")
    except ValidationFailed as refused:
        errors.update(refused.details)
    if checked is not None and country_code != sepa.iban_country_numeric(checked):
        errors["country_code"] = "Must be the IBAN's country."
    if currency != sepa.EUR:
        errors["currency"] = "SEPA moves EUR only."
    if bic is not None:
        try:
            bic = sepa.checked_bic(bic, "sepa.bic")
        except ValidationFailed as refused:
            errors.update(refused.details)
    try:
        holder_name = _holder_name(holder_name, ExternalAccount.Kind.SEPA)
    except ValidationFailed as refused:
        errors.update(refused.details)
    if errors:
        raise ValidationFailed(details=errors)
    external = new_row(
        ExternalAccount,
        institution=institution,
        customer=customer,
        kind=ExternalAccount.Kind.SEPA,
        holder_name=holder_name,
        country_code=country_code,
        currency=currency,
        ach_routing_number="",
        ach_account_number_encrypted="",
        ach_account_number_last4="",
        ach_account_type="",
        sepa_bic=bic or "",
        metadata=metadata_check(metadata or {}),
        **actor.stamp("created_by"),
    )
    for field, value in external.sealed_iban(checked).items():
        setattr(external, field, value)
    with transaction.atomic(savepoint=False):
        external.save(force_insert=True)
        emit_for(external, "external_account.created", data=_event_data(external))
    return external


def external_account_update(
    *, external: ExternalAccount, changes: dict
) -> Outcome[ExternalAccount]:
    """Change `holder_name` or merge `metadata` (the numbers are corrected by the bank's
    notifications of change, or replaced by a new external account). Emits
    `external_account.updated` with what changed; no change writes nothing."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not external account fields: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        external = lock_external_account(external.pk)
        values = {}
        if "holder_name" in changes:
            name = _holder_name(changes["holder_name"], external.kind)
            if name != external.holder_name:
                values["holder_name"] = name
        if "metadata" in changes:
            merged = metadata_merge(external.metadata, changes["metadata"])
            if merged != external.metadata:
                values["metadata"] = merged
        if not values:
            return unchanged(external)
        previous = {field: getattr(external, field) for field in values}
        row_update(external, values)
        emit_for(
            external,
            "external_account.updated",
            data={**_event_data(external), "changed_fields": sorted(values)},
        )
    return changed(external, previous)


def external_account_verify(*, external: ExternalAccount, by: str) -> Outcome[ExternalAccount]:
    """Verified, by `prenote` (its return window passed with no return) or `staff` (checked by
    other means). One already verified is left as it is; a `failed` one (its prenote was
    returned) only by staff. Emits `external_account.verified`."""
    if by not in ("prenote", "staff"):
        raise ValueError(f"Verified by a prenote or staff, not {by!r}")
    with transaction.atomic(savepoint=False):
        external = lock_external_account(external.pk)
        if external.status == ExternalAccount.Status.VERIFIED:
            return unchanged(external)
        if external.status == ExternalAccount.Status.FAILED and by != "staff":
            return unchanged(external)
        row_update(
            external,
            {
                "status": ExternalAccount.Status.VERIFIED,
                "verified_at": timezone.now(),
                "verified_by": by,
            },
        )
        emit_for(
            external,
            "external_account.verified",
            data={**_event_data(external), "verified_by": by},
        )
    return changed(external, {})


def external_account_status(*, external: ExternalAccount, status: str, reason: str) -> None:
    """`verifying` (its prenote sent) or `failed` (its prenote returned: `reason` the return's
    normalized reason), in the caller's transaction. Emits `external_account.status_changed`."""
    if status not in (ExternalAccount.Status.VERIFYING, ExternalAccount.Status.FAILED):
        raise ValueError(status)
    external = lock_external_account(external.pk)
    if external.status == ExternalAccount.Status.VERIFIED and status == "verifying":
        raise InvalidStateTransition(
            "The external account is verified already.", from_state=external.status, to_state=status
        )
    if external.status == status:
        return
    row_update(external, {"status": status, "verified_at": None, "verified_by": ""})
    emit_for(
        external,
        "external_account.status_changed",
        data={**_event_data(external), "reason": reason},
    )


def external_account_correct(
    *, external: ExternalAccount, change_code: str, corrections: dict
) -> Outcome[ExternalAccount]:
    """Apply the bank's notification of change (`change_code` C01-C14; `corrections`: the
    `routing_number`, `account_number` and `account_type` it corrects, the others ignored):
    later orders use the corrected details; no money moves. Emits
    `external_account.corrected` (what changed, never the account number)."""
    values: dict = {}
    with transaction.atomic(savepoint=False):
        external = lock_external_account(external.pk)
        if external.kind != ExternalAccount.Kind.ACH:
            return unchanged(external)  # NACHA's changes correct ACH details only
        if "routing_number" in corrections:
            routing = checked_routing_number(corrections["routing_number"])
            if routing != external.ach_routing_number:
                values["ach_routing_number"] = routing
        if "account_type" in corrections and corrections["account_type"] in (
            ExternalAccount.AccountType.values
        ):
            if corrections["account_type"] != external.ach_account_type:
                values["ach_account_type"] = corrections["account_type"]
        number = corrections.get("account_number")
        if number and ACCOUNT_NUMBER.match(number) and number != external.ach_account_number():
            values.update(external.sealed_account_number(number))
        if not values:
            return unchanged(external)
        row_update(external, values)
        changed_fields = sorted(
            "account_number" if field.startswith("ach_account_number") else field
            for field in values
        )
        emit_for(
            external,
            "external_account.corrected",
            data={
                **_event_data(external),
                "change_code": change_code,
                "changed_fields": sorted(set(changed_fields)),
            },
        )
    return changed(external, {})
