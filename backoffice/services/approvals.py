"""Four eyes where money moves (docs/back-office.md, "Four eyes"): a maker–checker flow.

A staff user never moves money alone in the back office above their institution's threshold
(`backoffice.services.staff_changes` decides who acts alone). They ask
(`approval_request_adjustment`, `_fee_waiver`, `_overdraft_raise`, `_card_limits_raise`,
`_pin_unblock`): a pending `ApprovalRequest` with their reason, and `approval.requested`. Another
staff user decides:

- `approval_approve` locks the request, finds it still pending and not their own, and runs the
  real service as the approver, in the same transaction: `adjustment_create` (a load or an
  unload), `fee_waive` (the request's reason is the waiver's), `account_set_overdraft_limit`,
  `card_limits_set`, `card_pin_unblock` (the request's reason is the unblock's), a
  reconciliation break's booking (`break_book`), force post (`network_only_force_post`) or
  credit's placement (`break_place`). A
  refusal of that service (422 `insufficient_funds`, `account_not_active`, 409 the fee waived
  meanwhile...) undoes the whole approval: the request stays pending and the refusal says
  why. Approved, the request keeps the id of what it made; `approval.approved`.
- `approval_reject`: nothing moves; `approval.rejected`.

Nobody decides their own request: refused here (403 `permission_denied`), and by the database
(CHECK `approval_decider_not_requester`) whatever writes the row. Each decision needs a reason.
Every event names its staff user (the current actor: docs/events.md).
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, Adjustment, Fee
from accounts.services import (
    account_set_overdraft_limit,
    adjustment_create,
    check_overdraft_raise,
    fee_waive,
)
from cards.models import Card
from cards.services import card_limits_set, card_pin_unblock, check_limits_order
from cards.services.limits import LIMIT_FIELDS
from cards.services.status import require_not_final
from core.actors import Actor
from core.exceptions import (
    AccountNotActive,
    AlreadyExists,
    BusinessRuleViolation,
    InvalidStateTransition,
    PermissionDenied,
    ValidationFailed,
)
from core.money import MAX_AMOUNT
from core.operations import Outcome, changed
from events.services import emit_for
from payments.models import ACH_RAILS, InboundEntry
from payments.nacha.codes import return_reason
from payments.services.inbound import SEPA_NOT_RETURNED, inbound_entry_apply, inbound_entry_return
from reconciliation.models import ReconciliationBreak
from reconciliation.services.breaks import (
    CREDIT,
    FEE,
    bookable,
    break_book,
    break_place,
    placeable,
)
from reconciliation.services.force_post import force_postable, network_only_force_post

from ..locks import lock_approval_request
from ..models import ApprovalRequest

Kind = ApprovalRequest.Kind

MAX_REASON_LENGTH = 500
MAX_DESCRIPTION_LENGTH = 500


def _staff_user(actor: Actor):
    if actor.user is None:
        raise PermissionDenied("Only a staff user asks for or decides an approval request.")
    return actor.user


def checked_reason(reason, field: str = "reason") -> str:
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise ValidationFailed("A reason is required.", details={field: "This field is required."})
    if len(reason) > MAX_REASON_LENGTH:
        raise ValidationFailed(details={field: f"At most {MAX_REASON_LENGTH} characters."})
    return reason


def checked_adjustment(account: Account, direction: str, amount: int, description: str) -> str:
    """The adjustment's description, stripped, once its direction, amount and description are
    ones staff may ask for (400), on an account that is not internal (422)."""
    if direction not in Adjustment.Direction.values:
        raise ValidationFailed(details={"direction": "credit or debit."})
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_AMOUNT:
        raise ValidationFailed(details={"amount": f"An integer from 1 to {MAX_AMOUNT}."})
    description = (description or "").strip()
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed(
            details={"description": f"At most {MAX_DESCRIPTION_LENGTH} characters."}
        )
    if account.is_internal:
        raise BusinessRuleViolation(
            "An internal account is not adjusted by staff.", details={"account_id": account.pk}
        )
    return description


def checked_limit(value, field: str) -> int:
    """An overdraft or card limit staff may set: an integer from 0 to MAX_AMOUNT (400)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_AMOUNT:
        raise ValidationFailed(details={field: f"An integer from 0 to {MAX_AMOUNT}."})
    return value


def checked_card_limits(changes: dict) -> dict:
    """Card limits staff may set: fields of LIMIT_FIELDS, each a `checked_limit` (400)."""
    unknown = set(changes) - set(LIMIT_FIELDS)
    if unknown:
        raise ValidationFailed(details={field: "Not a card limit." for field in sorted(unknown)})
    return {field: checked_limit(value, field) for field, value in changes.items()}


def approval_data(approval: ApprovalRequest) -> dict:
    """The data of the approval's events."""
    return {
        "kind": approval.kind,
        "target_id": approval.target_id,
        "amount": approval.amount,
        "currency": approval.currency,
        "status": approval.status,
        "requested_by": str(approval.requested_by_id),
        "decided_by": None if approval.decided_by_id is None else str(approval.decided_by_id),
        "result_id": approval.result_id or None,
    }


def _create(approval: ApprovalRequest) -> ApprovalRequest:
    with transaction.atomic(savepoint=False):
        approval.save(force_insert=True)
        emit_for(approval, "approval.requested", data=approval_data(approval))
    return approval


def approval_request_adjustment(
    *,
    account: Account,
    direction: str,
    amount: int,
    description: str = "",
    reason: str,
    actor: Actor,
) -> ApprovalRequest:
    """Ask for a load (`credit`) or an unload (`debit`) of `amount` minor units of the account's
    currency (the account's, as `adjustment_create` posts it), with the staff user's `reason`.
    Nothing moves until another staff user approves. 400 for a direction, an amount, a
    description or a reason that is not one; 422 `business_rule_violation` for an internal account
    (it carries the institution's side of every journal: never adjusted by staff). Funds and
    the account's status are checked when approved, against the balance then."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    description = checked_adjustment(account, direction, amount, description)
    return _create(
        ApprovalRequest(
            institution_id=account.institution_id,
            kind=ApprovalRequest.Kind.ADJUSTMENT,
            target_id=account.pk,
            parameters={
                "direction": direction,
                "amount": amount,
                "currency": account.currency,
                "description": description,
            },
            amount=amount,
            currency=account.currency,
            requested_by=user,
            request_reason=reason,
        )
    )


def approval_request_fee_waiver(*, fee: Fee, reason: str, actor: Actor) -> ApprovalRequest:
    """Ask for `fee` to be waived, with the staff user's `reason` (the waiver's reason once
    approved). 409 `invalid_state_transition` for a fee that is not charged; 409
    `already_exists` when a waiver of it is already waiting (a partial unique index)."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    if fee.status != Fee.Status.CHARGED:
        raise InvalidStateTransition(
            f"The fee is {fee.status}: only a charged fee can be waived.",
            from_state=fee.status,
            to_state=Fee.Status.WAIVED,
        )
    return _create_one_pending(
        ApprovalRequest(
            institution_id=fee.institution_id,
            kind=ApprovalRequest.Kind.FEE_WAIVER,
            target_id=fee.pk,
            amount=fee.amount,
            currency=fee.currency,
            requested_by=user,
            request_reason=reason,
        ),
        "A waiver of this fee is already waiting for approval.",
        {"fee_id": fee.pk},
    )


def _create_one_pending(approval: ApprovalRequest, message: str, details: dict):
    """`_create`, where one request of its kind about its target waits at a time (a partial
    unique index): 409 `already_exists` for a second."""
    try:
        with transaction.atomic():
            return _create(approval)
    except IntegrityError as error:
        if "approval_one_pending_per_target" not in str(error):
            raise
        raise AlreadyExists(message, details=details) from None


def approval_request_overdraft_raise(
    *, account: Account, limit: int, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for the account's overdraft limit raised to `limit` minor units of its currency.
    400 for a limit that is not one or not above the account's limit now, or that its product
    does not give (`check_overdraft_raise`); 422 `business_rule_violation` for an internal
    account, `account_not_active` for a closed one; 409 `already_exists` when a raise of the
    account waits already. The limit in use and the product are checked again when approved
    (`account_set_overdraft_limit`)."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    limit = checked_limit(limit, "overdraft_limit")
    if account.is_internal:
        raise BusinessRuleViolation(
            "An internal account has no overdraft limit.", details={"account_id": account.pk}
        )
    if account.status == Account.Status.CLOSED:
        raise AccountNotActive(f"Account {account.pk} is closed.")
    if limit <= account.overdraft_limit:
        raise ValidationFailed(
            details={
                "overdraft_limit": f"Above the limit now ({account.overdraft_limit}): a lower "
                "limit is set without approval."
            }
        )
    check_overdraft_raise(account.product, limit)
    return _create_one_pending(
        ApprovalRequest(
            institution_id=account.institution_id,
            kind=ApprovalRequest.Kind.OVERDRAFT_RAISE,
            target_id=account.pk,
            parameters={"overdraft_limit": limit},
            amount=limit,
            currency=account.currency,
            requested_by=user,
            request_reason=reason,
        ),
        "A raise of this account's overdraft limit is already waiting for approval.",
        {"account_id": account.pk},
    )


def raised_limits(card: Card, changes: dict) -> dict:
    """Of `changes` (field -> new value), those above the card's limit now."""
    return {field: value for field, value in changes.items() if value > getattr(card, field)}


def approval_request_card_limits_raise(
    *, card: Card, changes: dict, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for some of the card's limits changed (`changes`: field names of
    `cards.services.limits.LIMIT_FIELDS` -> minor units of the account's currency), at least one
    of them raised; measured by the highest limit raised. 400 for a value that is not one, no
    raise, or limits out of order (`check_limits_order`); 422 `card_not_active` for a card
    that is not live; 409 `already_exists` when a raise of the card waits already."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    changes = checked_card_limits(changes)
    require_not_final(card)
    raised = raised_limits(card, changes)
    if not raised:
        raise ValidationFailed(
            details={"limits": "No limit is raised: lower limits are set without approval."}
        )
    check_limits_order(card, changes)
    return _create_one_pending(
        ApprovalRequest(
            institution_id=card.institution_id,
            kind=ApprovalRequest.Kind.CARD_LIMITS_RAISE,
            target_id=card.pk,
            parameters={"limits": changes},
            amount=max(raised.values()),
            currency=card.account.currency,
            requested_by=user,
            request_reason=reason,
        ),
        "A raise of this card's limits is already waiting for approval.",
        {"card_id": card.pk},
    )


def approval_request_pin_unblock(*, card: Card, reason: str, actor: Actor) -> ApprovalRequest:
    """Ask for the card's blocked PIN unblocked (the reason is the unblock's once approved).
    409 `invalid_state_transition` for a PIN that is not blocked; 422 `card_not_active` for a
    card that is not live; 409 `already_exists` when an unblock of the card waits already."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    require_not_final(card)
    if not card.pin_blocked:
        raise InvalidStateTransition(
            "The card's PIN is not blocked.", from_state="unblocked", to_state="unblocked"
        )
    return _create_one_pending(
        ApprovalRequest(
            institution_id=card.institution_id,
            kind=ApprovalRequest.Kind.PIN_UNBLOCK,
            target_id=card.pk,
            amount=None,
            currency="",
            requested_by=user,
            request_reason=reason,
        ),
        "An unblock of this card's PIN is already waiting for approval.",
        {"card_id": card.pk},
    )


def approval_request_inbound_apply(
    *, inbound: InboundEntry, account: Account, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for an inbound credit in suspense to be applied to `account` (docs/payments.md,
    "Inbound entries"), with the staff user's `reason`: its money moves when another staff user
    approves. 409 unless in suspense, and while one is waiting already; 400 for an account that
    cannot take it (another institution's, not in USD, not active)."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    _in_suspense(inbound, InboundEntry.Status.APPLIED)
    _can_take(account, inbound.institution_id, inbound.currency)
    return _create_one_pending(
        _inbound_request(inbound, Kind.INBOUND_APPLY, {"account_id": account.pk}, user, reason),
        "An application of this entry is already waiting for approval.",
        {"inbound_entry_id": inbound.pk},
    )


def approval_request_inbound_return(
    *, inbound: InboundEntry, code: str, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for an inbound credit in suspense to be returned with `code` (R01-R85), with the
    staff user's `reason`. 409 unless in suspense, and while one is waiting already."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    _in_suspense(inbound, InboundEntry.Status.RETURNING)
    if inbound.rail not in ACH_RAILS:
        raise ValidationFailed(details={"code": SEPA_NOT_RETURNED})
    if return_reason(code).normalized == "unknown":
        raise ValidationFailed(details={"code": "A return reason code R01-R85."})
    return _create_one_pending(
        _inbound_request(inbound, Kind.INBOUND_RETURN, {"code": code}, user, reason),
        "A return of this entry is already waiting for approval.",
        {"inbound_entry_id": inbound.pk},
    )


# The approval kind of each booking of a break's money (reconciliation.services.breaks).
BREAK_BOOKINGS = {Kind.BREAK_CREDIT: CREDIT, Kind.BREAK_FEE: FEE}
# The kinds of a break's resolution that moves money: its bookings, the force post of a
# network-only break's late presentment (reconciliation.services.force_post), and a credit's
# placement from suspense on an account (a break resolved already).
BREAK_RESOLUTIONS = (*BREAK_BOOKINGS, Kind.BREAK_FORCE_POST, Kind.BREAK_PLACE)


def approval_request_break_book(
    *, brk: ReconciliationBreak, kind: str, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for a reconciliation break's money moved (`kind`: BREAK_CREDIT, a bank-only credit
    to suspense; BREAK_FEE, a bank fee; BREAK_FORCE_POST, a late presentment cleared;
    docs/reconciliation.md, "Breaks" and "Force post"), with the staff user's `reason`: it is
    moved when another staff user approves. 409 once the break is resolved, and while one is
    waiting already; 422 for a break of another kind or sign to book (409 to force post, as
    the service refuses it)."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    brk = ReconciliationBreak.objects.get(pk=brk.pk)  # as it is now, not as the page read it
    if kind == Kind.BREAK_FORCE_POST:
        force_postable(brk)
        amount = -brk.settlement_row.amount  # what is presented: what the network settled
    else:
        bookable(brk, BREAK_BOOKINGS[kind])
        amount = abs(brk.amount)
    return _create_one_pending(
        ApprovalRequest(
            institution_id=brk.institution_id,
            kind=kind,
            target_id=brk.pk,
            amount=amount,
            currency=brk.currency,
            requested_by=user,
            request_reason=reason,
        ),
        "A resolution of this break is already waiting for approval.",
        {"break_id": brk.pk},
    )


def approval_request_break_place(
    *, brk: ReconciliationBreak, account: Account, reason: str, actor: Actor
) -> ApprovalRequest:
    """Ask for a reconciliation break's credit booked to suspense to be placed on `account`
    (docs/reconciliation.md, "The breaks' work"), with the staff user's `reason`: it moves when
    another staff user approves. 409 unless its credit waits in suspense, and while one is
    waiting already; 400 for an account that cannot take it (as an inbound credit's)."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    brk = ReconciliationBreak.objects.get(pk=brk.pk)  # as it is now, not as the page read it
    placeable(brk)
    _can_take(account, brk.institution_id, brk.currency)
    return _create_one_pending(
        ApprovalRequest(
            institution_id=brk.institution_id,
            kind=Kind.BREAK_PLACE,
            target_id=brk.pk,
            parameters={"account_id": account.pk},
            amount=brk.amount,
            currency=brk.currency,
            requested_by=user,
            request_reason=reason,
        ),
        "A placement of this break's credit is already waiting for approval.",
        {"break_id": brk.pk},
    )


def _can_take(account: Account, institution_id: str, currency: str) -> None:
    """400 unless `account` is an active customer account of the institution in `currency`:
    one that money from suspense may be placed on."""
    if (
        account.institution_id != institution_id
        or account.currency != currency
        or account.kind != Account.Kind.CUSTOMER
        or account.status != Account.Status.ACTIVE
    ):
        raise ValidationFailed(
            details={
                "account_id": "An active customer account of the institution in the credit's "
                "currency."
            }
        )


def _in_suspense(inbound: InboundEntry, to_state: str) -> None:
    if inbound.status != InboundEntry.Status.SUSPENSE:
        raise InvalidStateTransition(
            f"The inbound entry is {inbound.status}: only one in suspense is placed by staff.",
            from_state=inbound.status,
            to_state=to_state,
        )


def _inbound_request(inbound, kind, parameters, user, reason) -> ApprovalRequest:
    return ApprovalRequest(
        institution_id=inbound.institution_id,
        kind=kind,
        target_id=inbound.pk,
        parameters=parameters,
        amount=inbound.amount,
        currency=inbound.currency,
        requested_by=user,
        request_reason=reason,
    )


def _decidable(approval: ApprovalRequest, user, to_state: str) -> ApprovalRequest:
    """The request, locked, when `user` may decide it now."""
    approval = lock_approval_request(approval.pk)
    if approval.requested_by_id == user.pk:
        raise PermissionDenied(
            "You asked for this change: another staff user must approve or reject it."
        )
    if approval.status != ApprovalRequest.Status.PENDING:
        raise InvalidStateTransition(
            f"The request is {approval.status} already.",
            from_state=approval.status,
            to_state=to_state,
        )
    return approval


def _decide(approval: ApprovalRequest, user, status: str, reason: str, result_id: str = ""):
    approval.status = status
    approval.decided_by = user
    approval.decided_at = approval.updated_at = timezone.now()
    approval.decision_reason = reason
    approval.result_id = result_id
    approval.save(
        update_fields=[
            "status",
            "decided_by",
            "decided_at",
            "decision_reason",
            "result_id",
            "updated_at",
        ]
    )


def _carry_out(approval: ApprovalRequest, actor: Actor) -> str:
    """Run the real service as the approver; the id of what it made."""
    if approval.kind == ApprovalRequest.Kind.ADJUSTMENT:
        account = Account.objects.select_related("institution").get(
            pk=approval.target_id, institution_id=approval.institution_id
        )
        parameters = approval.parameters
        adjustment = adjustment_create(
            account=account,
            direction=parameters["direction"],
            amount=parameters["amount"],
            currency=parameters["currency"],
            description=parameters["description"],
            actor=actor,
        )
        return adjustment.pk
    if approval.kind == ApprovalRequest.Kind.FEE_WAIVER:
        fee = Fee.objects.get(pk=approval.target_id, institution_id=approval.institution_id)
        return fee_waive(fee=fee, user=actor.user, reason=approval.request_reason).value.pk
    if approval.kind == ApprovalRequest.Kind.OVERDRAFT_RAISE:
        account = Account.objects.get(pk=approval.target_id, institution_id=approval.institution_id)
        limit = approval.parameters["overdraft_limit"]
        return account_set_overdraft_limit(account=account, limit=limit).value.pk
    if approval.kind in (Kind.INBOUND_APPLY, Kind.INBOUND_RETURN):
        inbound = InboundEntry.objects.get(
            pk=approval.target_id, institution_id=approval.institution_id
        )
        if approval.kind == Kind.INBOUND_RETURN:
            return inbound_entry_return(inbound=inbound, code=approval.parameters["code"]).value.pk
        account = Account.objects.get(
            pk=approval.parameters["account_id"], institution_id=approval.institution_id
        )
        return inbound_entry_apply(inbound=inbound, account=account).value.pk
    if approval.kind in BREAK_RESOLUTIONS:
        brk = ReconciliationBreak.objects.get(
            pk=approval.target_id, institution_id=approval.institution_id
        )
        if approval.kind == Kind.BREAK_FORCE_POST:
            return network_only_force_post(break_=brk, actor=actor).pk
        if approval.kind == Kind.BREAK_PLACE:
            account = Account.objects.get(
                pk=approval.parameters["account_id"], institution_id=approval.institution_id
            )
            return break_place(brk=brk, account=account).value.pk
        return break_book(brk=brk, how=BREAK_BOOKINGS[approval.kind]).value.pk
    card = Card.objects.get(pk=approval.target_id, institution_id=approval.institution_id)
    if approval.kind == ApprovalRequest.Kind.CARD_LIMITS_RAISE:
        return card_limits_set(card=card, changes=approval.parameters["limits"]).pk
    unblock_id = pin_unblocked(card, approval.request_reason, actor)
    if unblock_id is None:
        # Unblocked meanwhile (the cardholder's reset through the API): nothing to approve.
        raise InvalidStateTransition(
            "The card's PIN is not blocked any more: reject the request.",
            from_state="unblocked",
            to_state="unblocked",
        )
    return unblock_id


def pin_unblocked(card: Card, reason: str, actor: Actor) -> str | None:
    """`card_pin_unblock` by staff: the id of the unblock it recorded (None: not blocked)."""
    outcome = card_pin_unblock(card=card, actor=actor, reason=reason)
    if not outcome.changed:
        return None
    return str(outcome.value.pin_unblocks.latest("id").pk)


def approval_approve(
    *, approval: ApprovalRequest, reason: str, actor: Actor
) -> Outcome[ApprovalRequest]:
    """Approve a pending request of another staff user and carry it out, as `actor`, in one
    transaction (the request locked first: docs/money.md, "Locking"). 403 `permission_denied`
    for one's own request; 409 `invalid_state_transition` once decided; a refusal of the real
    service (422 `insufficient_funds`, ...) is raised as it is and leaves the request pending."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    with transaction.atomic(savepoint=False):
        approval = _decidable(approval, user, ApprovalRequest.Status.APPROVED)
        result_id = _carry_out(approval, actor)
        _decide(approval, user, ApprovalRequest.Status.APPROVED, reason, result_id)
        emit_for(approval, "approval.approved", data=approval_data(approval))
    return changed(approval, ApprovalRequest.Status.PENDING)


def approval_reject(
    *, approval: ApprovalRequest, reason: str, actor: Actor
) -> Outcome[ApprovalRequest]:
    """Reject a pending request of another staff user: nothing moves. 403 `permission_denied`
    for one's own request; 409 `invalid_state_transition` once decided."""
    user = _staff_user(actor)
    reason = checked_reason(reason)
    with transaction.atomic(savepoint=False):
        approval = _decidable(approval, user, ApprovalRequest.Status.REJECTED)
        _decide(approval, user, ApprovalRequest.Status.REJECTED, reason)
        emit_for(approval, "approval.rejected", data=approval_data(approval))
    return changed(approval, ApprovalRequest.Status.PENDING)
