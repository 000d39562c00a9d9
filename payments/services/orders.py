"""Payment orders made, approved and cancelled (docs/payments.md, "Payment orders"); their cut-off
(`cutoff`), settlement (`settlement`) and returns (`returns`) have modules of their own.

A **credit** pays out: its money is held on the account when the order is made (a hold of
purpose `payment_order`: 422 `insufficient_funds` when the account has not got it), and leaves
the account when the cut-off puts the order in a file. A **debit** collects: nothing moves
until it settles. A **prenote** is a zero-amount entry that verifies an external account.

Every rail goes through the same services: ACH (`ach`, `ach_same_day`: a SEC code and a
batch description) and SEPA (`sepa_ct` and `sepa_inst`, credits; `sepa_dd`, debits under a
mandate, refused until mandates exist: an end-to-end id, unique in the institution, given or
made from the order's id, and either unstructured remittance information or an ISO 11649
creditor reference). A SEPA credit transfer's requested execution date is a SEPA day (its
institution's business day and TARGET2's): one that is not moves to the next that is, as an
ACH order's effective date moves to the next ACH day.

Refusals, each before anything is written (docs/payments.md has the codes): an external
account of the other rail's kind (422 `rail_mismatch`); a currency the rail does not move
(ACH: USD; SEPA: EUR) or not the account's (422 `currency_mismatch`); a same-day entry above
the institution's same-day limit (422 `limit_exceeded`); an external account not verified where
the institution requires it (422 `external_account_not_verified`); an institution with no
profile for the rail (422 `rail_not_available`), or an interbank profile's credit transfer
(instant or not) from an account without an IBAN (422 `rail_not_available`) or to an
external account without a BIC (400); an end-to-end id the institution has given
another order (422 `duplicate_reference`, also when two requests race for it: a unique index
decides); an external account that is neither the institution's nor one of the account's
holders' (400).

Above the institution's `approval_above`, the order waits for a staff user's approval
(`needs_approval`, `payment_order_approve`: the API key asked, a person approves); its credit's
money is held meanwhile.
"""

from datetime import date, datetime, time, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Hold
from accounts.selectors import account_get
from accounts.services import hold_place, hold_release
from cards.dates import today_of
from core.actors import Actor
from core.exceptions import (
    BusinessRuleViolation,
    CurrencyMismatch,
    DuplicateReference,
    InvalidStateTransition,
    LimitExceeded,
    PermissionDenied,
    ValidationFailed,
)
from core.metadata import metadata_check
from core.operations import Outcome, changed
from core.rows import constraint_of, new_row, row_update
from institutions.models import Institution

from .. import sepa
from ..account_ibans import account_iban
from ..calendar import sepa_days_after
from ..locks import lock_payment_order
from ..models import (
    ACH_RAILS,
    SEPA_RAILS,
    AchProfile,
    ExternalAccount,
    PaymentOrder,
    Rail,
    SepaProfile,
)
from ..nacha.fields import PRINTABLE
from ..selectors import external_account_get
from .collections import creditor_profile_of, due_date, mandate_of_collection, mandate_usable
from .external_accounts import USD, external_account_status
from .order_events import emit_order

# The currency each rail moves.
RAIL_CURRENCY = {
    Rail.ACH: USD,
    Rail.ACH_SAME_DAY: USD,
    Rail.SEPA_CT: sepa.EUR,
    Rail.SEPA_INST: sepa.EUR,
    Rail.SEPA_DD: sepa.EUR,
}
# The kind of external account each rail reaches.
RAIL_KIND = {rail: ExternalAccount.Kind.ACH for rail in ACH_RAILS} | {
    rail: ExternalAccount.Kind.SEPA for rail in SEPA_RAILS
}
# A SEPA rail's one direction: a credit transfer pays, a direct debit collects.
SEPA_DIRECTION = {
    Rail.SEPA_CT: PaymentOrder.Direction.CREDIT,
    Rail.SEPA_INST: PaymentOrder.Direction.CREDIT,
    Rail.SEPA_DD: PaymentOrder.Direction.DEBIT,
}
MAX_DESCRIPTION = 10  # NACHA's company entry description
MAX_REMITTANCE = 80  # an addenda 05's payment related information
# A credit's hold outlives any cut-off it can wait for: released when the order is cancelled.
HOLD_DAYS_AFTER_EXECUTION = 60

Status = PaymentOrder.Status


class RailNotAvailable(BusinessRuleViolation):
    code = "rail_not_available"
    message = "The institution does not send payment orders over this rail."


class ExternalAccountNotVerified(BusinessRuleViolation):
    code = "external_account_not_verified"
    message = "The institution pays only verified external accounts: verify it first."


class RailMismatch(BusinessRuleViolation):
    code = "rail_mismatch"
    message = (
        "The external account is not reached over this rail: an ACH account over ach or "
        "ach_same_day, a SEPA account (an IBAN) over sepa_ct, sepa_inst or sepa_dd."
    )


def ach_profile_of(institution: Institution) -> AchProfile:
    profile = AchProfile.objects.filter(institution=institution).first()
    if profile is None:
        raise RailNotAvailable(details={"rail": Rail.ACH})
    return profile


def sepa_profile_of(institution: Institution, rail: str) -> SepaProfile:
    profile = SepaProfile.objects.filter(institution=institution).first()
    if profile is None:
        raise RailNotAvailable(details={"rail": rail})
    return profile


def _interbank_parties(profile: SepaProfile, account, external: ExternalAccount, rail) -> None:
    """Between banks both accounts are IBANs and both banks BICs (the pacs.008, an instant
    one's too, and the pacs.003): an interbank profile whose accounts have no IBAN
    (`iban_country`, `iban_bank_code` unset) sends no credit transfer and no collection (422
    `rail_not_available`), and an external account without its bank's BIC is not paid or
    collected from so (400)."""
    if account_iban(account, profile) is None:
        raise RailNotAvailable(
            "The institution's accounts have no IBAN (its SEPA profile issues none): a bank in "
            "the clearing names the customer's account by its IBAN.",
            details={"rail": rail},
        )
    if not external.sepa_bic:
        raise ValidationFailed(
            details={
                "external_account_id": "A bank in the clearing names the other bank: the "
                "external account needs its BIC."
            }
        )


def _rail_matches(external: ExternalAccount, rail: str) -> None:
    if RAIL_KIND[rail] != external.kind:
        raise RailMismatch(
            details={
                "rail": rail,
                "external_account_id": external.pk,
                "external_account_kind": external.kind,
            }
        )


def _text(value, field: str, most: int, *, required: bool) -> str:
    """A NACHA alphanumeric field's text: uppercased, in its character set, at most `most`."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ValidationFailed(details={field: "Must be a string."})
    value = value.strip().upper()
    if required and not value:
        raise ValidationFailed(details={field: "This field is required."})
    if len(value) > most:
        raise ValidationFailed(details={field: f"At most {most} characters."})
    if any(char not in PRINTABLE for char in value):
        raise ValidationFailed(
            details={field: "Printable ASCII only (letters, digits, spaces, punctuation)."}
        )
    return value


def _execution_date(institution: Institution, value, rail: str = Rail.ACH) -> date:
    """The requested date: today by default, at most `PaymentOrder.MAX_DAYS_AHEAD` ahead; a SEPA
    credit transfer's or direct debit's on a day that is not a SEPA day moves to the next that is
    (SEPA Instant runs every day)."""
    today = today_of(institution)
    if value is None:
        value = today
    if not isinstance(value, date) or isinstance(value, datetime):
        raise ValidationFailed(details={"requested_execution_date": "Must be a date."})
    if not today <= value <= today + timedelta(days=PaymentOrder.MAX_DAYS_AHEAD):
        raise ValidationFailed(
            details={
                "requested_execution_date": (
                    f"From today ({today}) to {PaymentOrder.MAX_DAYS_AHEAD} days ahead."
                )
            }
        )
    if rail in (Rail.SEPA_CT, Rail.SEPA_DD):
        return sepa_days_after(institution, value, 0)
    return value


def _rail_fields(
    rail: str,
    direction: str,
    sec_code,
    description,
    remittance_info,
    end_to_end_id,
    creditor_reference,
) -> dict:
    """The fields of the order that are its rail's, checked (400 naming the field): ACH's SEC
    code and description and its addenda's 80 characters; SEPA's end-to-end id, and either 140
    characters of remittance information or a creditor reference; none of the other rail's."""
    if rail in ACH_RAILS:
        errors = {}
        if sec_code not in PaymentOrder.SecCode.values:
            errors["sec_code"] = f"Must be one of {', '.join(PaymentOrder.SecCode.values)}."
        for field, value in (
            ("end_to_end_id", end_to_end_id),
            ("creditor_reference", creditor_reference),
        ):
            if value is not None:
                errors[field] = "SEPA only: an ACH order has none."
        if errors:
            raise ValidationFailed(details=errors)
        return {
            "sec_code": sec_code,
            "description": _text(description, "description", MAX_DESCRIPTION, required=True),
            "remittance_info": _text(
                remittance_info, "remittance_info", MAX_REMITTANCE, required=False
            ),
        }
    errors = {}
    if direction != SEPA_DIRECTION[rail]:
        errors["direction"] = (
            "A SEPA direct debit collects (debit)."
            if rail == Rail.SEPA_DD
            else "A SEPA credit transfer pays (credit)."
        )
    for field, value in (("sec_code", sec_code), ("description", description)):
        if value is not None:
            errors[field] = "ACH only: a SEPA order has none."
    if remittance_info and creditor_reference is not None:
        errors["creditor_reference"] = (
            "Either remittance information or a creditor reference, not both."
        )
    if errors:
        raise ValidationFailed(details=errors)
    fields = {"sec_code": "", "description": "", "end_to_end_id": "", "creditor_reference": ""}
    if end_to_end_id is not None:
        fields["end_to_end_id"] = sepa.checked_end_to_end_id(end_to_end_id)
    fields["remittance_info"] = sepa.checked_text(
        remittance_info, "remittance_info", sepa.MAX_REMITTANCE
    )
    if creditor_reference is not None:
        fields["creditor_reference"] = sepa.checked_creditor_reference(creditor_reference)
    return fields


def _hold_expiry(institution: Institution, day: date) -> datetime:
    end = datetime.combine(day + timedelta(days=HOLD_DAYS_AFTER_EXECUTION), time.max)
    return timezone.make_aware(end, ZoneInfo(institution.time_zone))


def payment_order_create(
    *,
    institution: Institution,
    account_id: str,
    external_account_id: str,
    direction: str,
    amount: int,
    currency: str,
    rail: str,
    sec_code: str | None = None,
    description: str | None = None,
    remittance_info: str = "",
    end_to_end_id: str | None = None,
    creditor_reference: str | None = None,
    requested_execution_date: date | None = None,
    mandate_id: str | None = None,
    final_collection: bool = False,
    metadata: dict | None = None,
    actor: Actor,
) -> PaymentOrder:
    """A new order (module docstring): `approved`, or `needs_approval` above the institution's
    `approval_above`; a credit's amount held on the account. Emits `payment_order.created`."""
    errors = {}
    if direction not in PaymentOrder.Direction.values:
        errors["direction"] = "Must be credit or debit."
    if rail not in Rail.values:
        errors["rail"] = f"Must be one of {', '.join(Rail.values)}."
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        errors["amount"] = "Must be a positive integer of minor units."
    if rail == Rail.SEPA_DD and mandate_id is None:
        errors["mandate_id"] = "A SEPA direct debit collects under a mandate: required."
    elif rail != Rail.SEPA_DD and mandate_id is not None:
        errors["mandate_id"] = "A SEPA direct debit's (sepa_dd) only."
    if final_collection and rail != Rail.SEPA_DD:
        errors["final_collection"] = "A SEPA direct debit's (sepa_dd) only."
    if errors:
        raise ValidationFailed(details=errors)
    fields = _rail_fields(
        rail, direction, sec_code, description, remittance_info, end_to_end_id, creditor_reference
    )
    metadata = metadata_check(metadata or {})
    account = account_get(institution=institution, account_id=account_id)
    external = external_account_get(
        institution=institution, external_account_id=external_account_id
    )
    if external.customer_id is not None and not account.is_held_by(external.customer_id):
        raise ValidationFailed(
            details={
                "external_account_id": "An external account of the institution or of one of "
                "the account's holders."
            }
        )
    _rail_matches(external, rail)
    if currency != RAIL_CURRENCY[rail] or currency != account.currency:
        raise CurrencyMismatch(
            f"The {rail} rail moves {RAIL_CURRENCY[rail]} and the account is in "
            f"{account.currency}.",
            details={
                "currency": currency,
                "rail_currency": RAIL_CURRENCY[rail],
                "account_currency": account.currency,
            },
        )
    if rail in ACH_RAILS:
        profile = ach_profile_of(institution)
        if rail == Rail.ACH_SAME_DAY and amount > profile.same_day_limit:
            raise LimitExceeded(
                "Above the same-day ACH limit of one entry: send it next day.",
                details={"limit": "same_day", "value": profile.same_day_limit, "amount": amount},
            )
    else:
        profile = sepa_profile_of(institution, rail)
        if profile.kind == SepaProfile.Kind.INTERBANK:
            _interbank_parties(profile, account, external, rail)
        if rail == Rail.SEPA_INST and not settings.SEPA_INSTANT_CLEARING:
            raise RailNotAvailable(
                "No SEPA Instant clearing is configured (SEPA_INSTANT_CLEARING).",
                details={"rail": rail},
            )
    mandate = None
    if rail == Rail.SEPA_DD:
        creditor_profile_of(institution)
        mandate = mandate_of_collection(institution, mandate_id, external, final_collection)
    if profile.require_verified and external.status != ExternalAccount.Status.VERIFIED:
        raise ExternalAccountNotVerified(
            details={"external_account_id": external.pk, "status": external.status}
        )
    if rail == Rail.SEPA_DD:
        day = due_date(profile, requested_execution_date)
    else:
        day = _execution_date(institution, requested_execution_date, rail)
    if fields.get("end_to_end_id") and _end_to_end_id_taken(institution, fields["end_to_end_id"]):
        raise DuplicateReference(
            "The institution has an order with this end-to-end id already.",
            details={"end_to_end_id": fields["end_to_end_id"]},
        )
    needs_approval = profile.approval_above is not None and amount > profile.approval_above
    order = new_row(
        PaymentOrder,
        institution=institution,
        account=account,
        external_account=external,
        direction=direction,
        amount=amount,
        currency=currency,
        rail=rail,
        requested_execution_date=day,
        status=Status.NEEDS_APPROVAL if needs_approval else Status.APPROVED,
        mandate=mandate,
        final_collection=final_collection,
        metadata=metadata,
        **fields,
        **actor.stamp("created_by"),
    )
    if rail in SEPA_RAILS and not order.end_to_end_id:
        order.end_to_end_id = default_end_to_end_id(order)
    try:
        with transaction.atomic(savepoint=False):
            if mandate is not None:
                mandate_usable(mandate.pk)
            if direction == PaymentOrder.Direction.CREDIT:
                order.hold = hold_place(
                    account=account,
                    amount=amount,
                    currency=currency,
                    expires_at=_hold_expiry(institution, day),
                    reason=f"Payment order {order.pk}",
                    actor=actor,
                    purpose=Hold.Purpose.PAYMENT_ORDER,
                )
            order.save(force_insert=True)
            emit_order(order, "payment_order.created")
            send_on_commit(order)
    except IntegrityError as error:
        # Another transaction took the end-to-end id between the check and the insert.
        if constraint_of(error) != "payment_order_end_to_end_id_once":
            raise
        raise DuplicateReference(
            "The institution has an order with this end-to-end id already.",
            details={"end_to_end_id": order.end_to_end_id},
        ) from None
    return order


def send_on_commit(order: PaymentOrder) -> None:
    """Have an approved SEPA Instant order sent once the caller's transaction commits (an order
    made or approved: `instant.instant_send`): the request that made it waits for the
    clearing's answer, at most the scheme's timeout."""
    if order.rail == Rail.SEPA_INST and order.status == Status.APPROVED:
        from .instant import instant_send  # it sends through the clearing, after the commit

        transaction.on_commit(partial(instant_send, order.pk), robust=True)


def default_end_to_end_id(order: PaymentOrder) -> str:
    """The end-to-end id of a SEPA order made without one: its id, `_` (not in SEPA's character
    set) as `-` ("po-01JD...", 29 characters)."""
    return order.pk.replace("_", "-")


def _end_to_end_id_taken(institution: Institution, end_to_end_id: str) -> bool:
    return PaymentOrder.objects.filter(
        institution=institution, end_to_end_id=end_to_end_id
    ).exists()


def external_account_prenote(*, external: ExternalAccount, actor: Actor) -> PaymentOrder:
    """A prenote to `external` (a zero-amount credit entry that the receiving bank checks): the
    external account becomes `verifying`; verified when the prenote's return window passes
    with no return, `failed` on a return (`payments.services.settlement`, `returns`). 409
    when it is verified already; 422 `rail_mismatch` for a SEPA account (SEPA has no prenote).
    Emits `payment_order.created`."""
    institution = external.institution
    _rail_matches(external, Rail.ACH)
    ach_profile_of(institution)
    with transaction.atomic(savepoint=False):
        external_account_status(
            external=external, status=ExternalAccount.Status.VERIFYING, reason="prenote sent"
        )
        order = new_row(
            PaymentOrder,
            institution=institution,
            account=None,
            external_account=external,
            direction=PaymentOrder.Direction.CREDIT,
            amount=0,
            currency=external.currency,
            rail=Rail.ACH,
            sec_code=(
                PaymentOrder.SecCode.CCD
                if external.customer_id is None
                else PaymentOrder.SecCode.PPD
            ),
            description="PRENOTE",
            prenote=True,
            requested_execution_date=today_of(institution),
            status=Status.APPROVED,
            **actor.stamp("created_by"),
        )
        order.save(force_insert=True)
        emit_order(order, "payment_order.created")
    return order


def payment_order_approve(*, order: PaymentOrder, actor: Actor) -> Outcome[PaymentOrder]:
    """A staff user approves an order waiting for approval (four eyes: never the one who made
    it, 403). 409 unless `needs_approval`. Emits `payment_order.approved`."""
    if actor.user is None:
        raise PermissionDenied("A staff user approves payment orders.")
    with transaction.atomic(savepoint=False):
        order = lock_payment_order(order.pk)
        if order.created_by_user_id is not None and order.created_by_user_id == actor.user.pk:
            raise PermissionDenied("Nobody approves their own payment order.")
        _require(order, Status.APPROVED, Status.NEEDS_APPROVAL)
        row_update(order, {"status": Status.APPROVED, "approval_id": f"staff:{actor.user.pk}"})
        emit_order(order, "payment_order.approved")
        send_on_commit(order)
    return changed(order, Status.NEEDS_APPROVAL)


def payment_order_cancel(*, order: PaymentOrder, reason: str = "") -> Outcome[PaymentOrder]:
    """Cancel an order not yet in a file (`needs_approval` or `approved`; 409 otherwise): a
    credit's hold is released. Emits `payment_order.cancelled`."""
    with transaction.atomic(savepoint=False):
        order = lock_payment_order(order.pk)
        _require(order, Status.CANCELLED, Status.NEEDS_APPROVAL, Status.APPROVED)
        if order.hold is not None:
            hold_release(hold=order.hold, purpose=Hold.Purpose.PAYMENT_ORDER)
        if order.prenote:
            external_account_status(
                external=order.external_account,
                status=ExternalAccount.Status.FAILED,
                reason="prenote cancelled",
            )
        previous = order.status
        row_update(order, {"status": Status.CANCELLED, "ended_reason": reason[:200]})
        emit_order(order, "payment_order.cancelled")
    return changed(order, previous)


def _require(order: PaymentOrder, to: str, *allowed: str) -> None:
    if order.status not in allowed:
        raise InvalidStateTransition(
            f"The payment order is {order.status}.", from_state=order.status, to_state=to
        )
