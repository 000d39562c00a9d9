"""The authorization decision (docs/design.md section 8, Card transactions).

Checked in the order of `authorizations.declines.ORDER`, on the card locked first and then its
account (the lock order of `accounts/locks.py`), so concurrent authorizations of one card are
decided one after the other and never pass a limit or the funds together:

1. card: status `active` (`card_not_active`), within its validity (`card_expired`);
2. currency: the account's (`currency_mismatch`);
3. security settings: the channel's switch (`channel_not_allowed`: ecommerce, contactless, atm;
   pos is always allowed), `international` when the merchant's country is not the cardholder's
   (`international_not_allowed`), `blockedMccs` (`mcc_blocked`), `blockedCountries`
   (`country_blocked`);
4. PIN, only when one is given: blocked (`pin_blocked`), wrong or none set (`incorrect_pin`; a
   wrong PIN counts as a try, the third blocks it);
5. limits: per transaction, daily, monthly, daily cash for `Cash` (`limit_exceeded`);
6. monitoring rules (`declined_by_monitoring`; every hit raises an alert, approved or not);
7. the account: active (`account_not_active`), enough available (`insufficient_funds`).

Approved: a hold of purpose `card_authorization` for the amount (it expires after
AUTHORIZATION_HOLD_DAYS), the amount counted against the card's limits, an `Unsettled` statement
line; `authorization.approved`. Declined: the authorization with its decline code, nothing
else; `authorization.declined`. Both are results, not errors: the caller answers 201 either way.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Hold
from accounts.services import hold_place
from cards.dates import is_past_expiry
from cards.models import Card
from cards.services import card_pin_try, check_limits, count_payment, lock_card
from core.actors import Actor
from core.exceptions import LimitExceeded
from core.metadata import metadata_check
from core.metrics import (
    AUTHORIZATION_APPROVED,
    DECISIONING_CALLS,
    authorization_declined,
    count_on_commit,
)
from core.rows import new_row
from decisioning import breaker, calls
from decisioning.models import DecisioningEndpoint
from decisioning.selectors import decisioning_endpoint_for_card
from events.services import emit_for
from monitoring.services import alerts_raise, screen

from .. import declines
from ..models import Authorization, Channel, ProgramDecided
from .currency import foreign_amount_check, foreign_event_data, foreign_line_fields
from .held import unsettled_line

# Why a degraded endpoint's authorization has no answer (`program_error`).
NOT_CALLED = "degraded: not called"

# channel -> the security setting that must be on (pos has no switch of its own)
CHANNEL_SETTING = {
    Channel.ECOMMERCE: "ecommerce",
    Channel.CONTACTLESS: "contactless",
    Channel.ATM: "atm",
}


@dataclass
class Decline(Exception):
    code: str
    reason: str
    details: dict = field(default_factory=dict)


def authorization_create(
    *,
    card: Card,
    amount: int,
    currency: str,
    type: str,
    merchant: dict,
    pin: str | None = None,
    actor: Actor,
    metadata: dict | None = None,
    merchant_amount: int | None = None,
    merchant_currency: str | None = None,
    partial_approval: bool = False,
    ask_program: bool = False,
) -> Authorization:
    """Decide an authorization of `amount` on `card` at `merchant` ({name, mcc, country_code,
    channel}); return it approved or declined (see the module docstring). `metadata`: the
    client's, approved or declined (`core.metadata`; 400 `validation_error` when invalid,
    before anything is decided). `merchant_amount`/`merchant_currency`: what the merchant charged
    in its currency, `amount` being the billing amount (`currency.foreign_amount_check`).
    `partial_approval`: the merchant's terminal takes less than asked (the network's
    partial-approval indicator): an account that has less than `amount` available, but more
    than nothing, is approved for what it has (`requested_amount` the amount asked) instead of
    declined `insufficient_funds`.

    `ask_program` (v2): when TX's checks pass and the card has a decisioning endpoint
    (`decisioning.selectors.decisioning_endpoint_for_card`), a live one decides: the
    authorization is returned held and `awaiting_program`, and the caller, once this
    transaction has committed, asks the program and finalizes it
    (`authorizations.services.program`). A shadow endpoint is asked the same way after TX has
    decided, and only recorded. A degraded endpoint (`decisioning.breaker`) is not asked, nor
    one whose institution has its bound of calls in flight in this process: its `on_failure`
    decides here at once. The call's slot is taken here (`decisioning.calls`): the caller runs
    this inside `decisioning.calls.scope()`, open until the call has returned."""
    metadata = metadata_check(metadata or {})
    foreign = foreign_amount_check(
        amount=amount,
        currency=currency,
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
    )
    endpoint = decisioning_endpoint_for_card(card) if ask_program else None
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        account = lock_accounts([card.account_id])[card.account_id]
        authorization = new_row(
            Authorization,
            institution_id=card.institution_id,
            card=card,
            account=account,
            type=type,
            amount=amount,
            currency=currency,
            **Authorization.merchant_fields(merchant),
            pin_given=pin is not None,
            partial_approval=partial_approval,
            metadata=metadata,
            **(foreign.fields() if foreign else {}),
            **actor.stamp("created_by"),
        )
        authorization.decided_at = authorization.created_at
        screening = None
        forced = False
        try:
            check_card(card, account, authorization)
            if pin is not None:
                _check_pin(card, pin)
            cash = type == Authorization.Type.CASH
            usage = check_card_limits(card, amount, cash)
            screening = screen(card=card, amount=amount, currency=currency, merchant=merchant)
            check_screening(screening)
            if endpoint is not None and endpoint.mode == DecisioningEndpoint.Mode.JIT:
                # The program funds what it approves: asked before any funds check.
                check_account_active(account)
                program_gate(authorization, endpoint)
                if not authorization.awaiting_program:  # not called: `on_failure` decides
                    forced = jit_stand_in(authorization, endpoint, account, partial_approval)
                    amount = authorization.amount
            else:
                approvable = check_account(account, amount, partial_approval)
                if approvable < amount:
                    authorization.requested_amount = amount
                    authorization.amount = amount = approvable
                if endpoint is not None:
                    program_gate(authorization, endpoint)
        except Decline as decline:
            authorization.decision = Authorization.Decision.DECLINED
            authorization.decline_code = decline.code
            authorization.decline_reason = decline.reason
            authorization.decline_details = decline.details or None
            authorization.save(force_insert=True)
            raise_alerts(screening, authorization, merchant)
            authorization_declined_record(authorization)
            return authorization
        if authorization.awaiting_program and authorization.program_mode == "jit":
            # Nothing held until the program approves and funds it; its usage counts now, so
            # that two payments of the card racing cannot pass a limit while it thinks.
            count_payment(card, usage.day, amount, currency=currency, cash=cash)
            authorization.spend_day = usage.day
            raise_alerts(screening, authorization, merchant)
            authorization.decided_at = None
            authorization.save(force_insert=True)
            return authorization
        hold = hold_place(
            account=account,
            amount=amount,
            currency=currency,
            expires_at=hold_expiry(),
            reason=f"{type} at {merchant['name']}",
            actor=actor,
            purpose=Hold.Purpose.CARD_AUTHORIZATION,
            forced=forced,
        )
        count_payment(card, usage.day, amount, currency=currency, cash=cash)
        authorization.hold = hold
        authorization.spend_day = usage.day
        raise_alerts(screening, authorization, merchant)
        if authorization.decision == Authorization.Decision.AWAITING_PROGRAM:
            authorization.decided_at = None
            authorization.save(force_insert=True)
            return authorization
        authorization.decision = Authorization.Decision.APPROVED
        authorization.save(force_insert=True)
        authorization_approved(authorization)
    return authorization


def hold_expiry():
    """When a card authorization's hold placed now expires (unless presented or reversed)."""
    return timezone.now() + timedelta(days=settings.AUTHORIZATION_HOLD_DAYS)


def authorization_approved(authorization: Authorization) -> None:
    """What an approval writes besides its hold and usage: the `Unsettled` statement line and
    `authorization.approved` (and `authorization.stood_in` when its program's `on_failure`
    approved), counted once committed. Also for an approval the program gave
    after TX held (`authorizations.services.program`)."""
    unsettled_line(
        authorization,
        authorization.hold,
        authorization.amount,
        **foreign_line_fields(authorization),
    )
    emit(authorization, "authorization.approved")
    _emit_stood_in(authorization)
    count_on_commit(AUTHORIZATION_APPROVED)


def authorization_declined_record(authorization: Authorization) -> None:
    """`authorization.declined` (and `authorization.stood_in` when its program's `on_failure`
    declined), counted once committed."""
    emit(authorization, "authorization.declined")
    _emit_stood_in(authorization)
    count_on_commit(authorization_declined(authorization.decline_code))


def program_gate(record: ProgramDecided, endpoint: DecisioningEndpoint) -> None:
    """Set how `endpoint` takes part in deciding `record` (an authorization or an increment),
    TX's checks having passed: a live endpoint that is called leaves it `awaiting_program`; a
    shadow one is only recorded. A call takes one of the institution's slots
    (`decisioning.calls`, inside the request's scope), given back when it returns. Not called,
    and a live one's `on_failure` decides now (raises the `program_unavailable` Decline, or lets
    TX's approval stand in): when the institution's calls in flight in this process are at
    their bound (`busy`), or when the endpoint is degraded (`decisioning.breaker`) and this
    request is not its probe (`skipped`)."""
    record.decisioning_endpoint = endpoint
    record.program_mode = endpoint.mode
    # The slot first: a busy request must not claim the degraded endpoint's probe.
    if not calls.take(institution_id=endpoint.institution_id, call_id=record.pk):
        limit = settings.DECISIONING_CALLS_PER_INSTITUTION
        return _not_called(record, endpoint, calls.busy_error(limit), outcome="busy")
    gate = breaker.gate(endpoint)
    if gate.call:
        if endpoint.mode != DecisioningEndpoint.Mode.SHADOW:
            record.decision = ProgramDecided.Decision.AWAITING_PROGRAM
        return None
    calls.release(record.pk)
    return _not_called(record, endpoint, NOT_CALLED, outcome="skipped")


def _not_called(
    record: ProgramDecided, endpoint: DecisioningEndpoint, error: str, *, outcome: str
) -> None:
    """The program is not asked about `record`: `error` says why; a live endpoint's
    `on_failure` decides now (raises the `program_unavailable` Decline for `decline`)."""
    record.program_error = error
    count_on_commit(DECISIONING_CALLS.labels(mode=endpoint.mode, outcome=outcome))
    if endpoint.mode == DecisioningEndpoint.Mode.SHADOW:
        return
    record.decided_by = ProgramDecided.DecidedBy.STANDIN
    if endpoint.on_failure == DecisioningEndpoint.OnFailure.DECLINE:
        raise program_unavailable(error)


def jit_stand_in(
    authorization: Authorization,
    endpoint: DecisioningEndpoint,
    account: Account,
    partial_approval: bool,
) -> bool:
    """A JIT program's authorization it did not decide (not called: the endpoint degraded, or
    its institution's calls at their bound; or no valid answer): its `on_failure` decides, and
    nothing is funded (docs/decisioning.md, "Just-in-time funding"). For `decline` the caller
    has declined it already; `standin`: TX's ledger decides on the account's own funds
    (`check_account`, a Decline when they fall short); `approve`: approved whatever the account
    has: its hold is forced, as the network's stand-in is, and what it takes beyond the
    available balance is the account's `network_overdraft` (`overdrawn_by`). Returns whether
    the hold is forced."""
    if endpoint.on_failure == DecisioningEndpoint.OnFailure.APPROVE:
        authorization.overdrawn_by = max(authorization.amount - max(account.available, 0), 0)
        return True
    approvable = check_account(account, authorization.amount, partial_approval)
    if approvable < authorization.amount:
        authorization.requested_amount = authorization.amount
        authorization.amount = approvable
    return False


def program_unavailable(error: str) -> Decline:
    return Decline(
        declines.PROGRAM_UNAVAILABLE,
        "The program did not decide this payment, and declines what it does not decide.",
        {"error": error},
    )


def _emit_stood_in(authorization: Authorization) -> None:
    """`authorization.stood_in` after `authorization.approved` or `.declined`, when the
    program's `on_failure` decided (its `error` says why the program did not)."""
    if authorization.decided_by != Authorization.DecidedBy.STANDIN:
        return
    emit(
        authorization,
        "authorization.stood_in",
        {
            "on_failure": authorization.decisioning_endpoint.on_failure,
            "error": authorization.program_error,
        },
    )


def check_card(card: Card, account: Account, authorization: Authorization) -> None:
    if card.status != Card.Status.ACTIVE:
        raise Decline(
            declines.CARD_NOT_ACTIVE, f"The card is {card.status}.", {"status": card.status}
        )
    if is_past_expiry(card):
        raise Decline(
            declines.CARD_EXPIRED,
            "The card is past its expiry date.",
            {"expiry_month": card.expiry_month, "expiry_year": card.expiry_year},
        )
    if authorization.currency != account.currency:
        raise Decline(
            declines.CURRENCY_MISMATCH,
            f"The card's account is in {account.currency}.",
            {"account_currency": account.currency},
        )
    setting = CHANNEL_SETTING.get(authorization.channel)
    if setting and not getattr(card, setting):
        raise Decline(
            declines.CHANNEL_NOT_ALLOWED,
            f"The card does not allow {authorization.channel} payments.",
            {"channel": authorization.channel},
        )
    home = card.customer.country_code
    if not card.international and authorization.merchant_country != home:
        raise Decline(
            declines.INTERNATIONAL_NOT_ALLOWED,
            "The card does not allow payments abroad.",
            {"merchant_country": authorization.merchant_country, "cardholder_country": home},
        )
    if authorization.merchant_mcc in card.blocked_mccs:
        raise Decline(
            declines.MCC_BLOCKED,
            "The card blocks this merchant category.",
            {"mcc": authorization.merchant_mcc},
        )
    if authorization.merchant_country in card.blocked_countries:
        raise Decline(
            declines.COUNTRY_BLOCKED,
            "The card blocks this merchant country.",
            {"country_code": authorization.merchant_country},
        )


def _check_pin(card: Card, pin: str) -> None:
    if card.pin_blocked:
        raise Decline(declines.PIN_BLOCKED, "The card's PIN is blocked.", {"remaining_tries": 0})
    if not card.pin_is_set:
        raise Decline(declines.INCORRECT_PIN, "No PIN is set on this card.", {"pin_set": False})
    check = card_pin_try(card, pin)
    if check.blocked:
        raise Decline(
            declines.PIN_BLOCKED,
            "Three wrong PINs in a row: the PIN is now blocked.",
            {"remaining_tries": 0},
        )
    if not check.verified:
        raise Decline(
            declines.INCORRECT_PIN,
            "The PIN is not correct.",
            {"remaining_tries": check.remaining_tries},
        )


def check_card_limits(card: Card, amount: int, cash: bool):
    try:
        return check_limits(card, amount, cash=cash)
    except LimitExceeded as error:
        raise Decline(declines.LIMIT_EXCEEDED, error.message, error.details) from None


def check_screening(screening) -> None:
    """Decline when a monitoring rule with action `decline` hit (`monitoring.services.screen`)."""
    if screening.declined:
        raise Decline(
            declines.DECLINED_BY_MONITORING,
            "A transaction monitoring rule declined this payment.",
            {"rule_ids": [rule.pk for rule, _ in screening.hits if rule.action == "decline"]},
        )


def check_account_active(account: Account) -> None:
    if account.status != Account.Status.ACTIVE:
        raise Decline(
            declines.ACCOUNT_NOT_ACTIVE,
            f"The card's account is {account.status}.",
            {"status": account.status},
        )


def check_account(account: Account, amount: int, partial_approval: bool) -> int:
    """The amount that can be approved: `amount`, or what is available when less is and a
    partial approval is allowed."""
    check_account_active(account)
    if account.available >= amount:
        return amount
    if partial_approval and account.available > 0:
        return account.available
    raise Decline(
        declines.INSUFFICIENT_FUNDS,
        "The account's available balance does not cover this amount.",
        {"available": account.available, "amount": amount},
    )


def raise_alerts(
    screening, authorization: Authorization, merchant: dict, amount: int | None = None
) -> None:
    """An alert per hit of `screening`, about the authorization (`amount`: what was screened,
    default its amount; an increment's)."""
    if screening is None or not screening.hits:
        return
    alerts_raise(
        screening=screening,
        card=authorization.card,
        amount=authorization.amount if amount is None else amount,
        currency=authorization.currency,
        merchant=merchant,
        subject_type="authorization",
        subject_id=authorization.pk,
    )


def emit(authorization: Authorization, event_type: str, extra: dict | None = None) -> None:
    data = {
        "card_id": authorization.card_id,
        "account_id": authorization.account_id,
        "type": authorization.type,
        "amount": authorization.amount,
        "currency": authorization.currency,
        "merchant": authorization.merchant,
        **foreign_event_data(authorization),
    }
    if authorization.decision == Authorization.Decision.DECLINED:
        data["decline_code"] = authorization.decline_code
    if authorization.decided_by != Authorization.DecidedBy.TX:
        data["decided_by"] = authorization.decided_by
    if authorization.requested_amount is not None:
        data["requested_amount"] = authorization.requested_amount
    if authorization.kind != Authorization.Kind.REQUEST:
        data["kind"] = authorization.kind
    if authorization.overdrawn_by:
        data["overdrawn_by"] = authorization.overdrawn_by
    data.update(extra or {})
    emit_for(authorization, event_type, data=data, institution=authorization.card.institution)
