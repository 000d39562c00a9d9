"""The program decides: the second half of an authorization with a decisioning endpoint
(issue 31 item 2; docs/decisioning.md, "The flow").

`authorization_create(ask_program=True)` has run TX's own checks, placed the hold, counted the
card's usage and committed, leaving the authorization `awaiting_program` (a live endpoint) or
approved (a shadow one). Then, with **no database transaction or row lock open**:

1. `authorization_ask_program` POSTs the signed request to the endpoint and returns what came
   back (`decisioning.services.CallResult`), bounded by the endpoint's `timeout_ms`;
2. `authorization_decide` applies it in a second transaction, on the authorization's row
   locked first: `{approved: true}` keeps the hold (an approval: its statement line and
   `authorization.approved`), `{approved: true, amount}` below the held amount replaces it by
   a hold of that amount (a partial approval: the difference given back to the account and the
   card's limits),
   `{approved: false, declineCode?}` releases it (`program_declined`); anything else is a
   failure and the endpoint's `on_failure` decides (`decline`: `program_unavailable`;
   `approve` and `standin`: TX's approval stands), with `authorization.stood_in`. A shadow
   endpoint's answer is recorded, never applied. Every outcome counts on the endpoint's breaker
   (`decisioning.breaker`) and in the metrics.

A process that dies between the two leaves the authorization `awaiting_program` with its hold:
`authorizations_resolve_stranded` (the `resolve_stranded_authorizations` job, every few seconds)
decides each one older than STRANDED_AFTER by its endpoint's `on_failure`, exactly once: it and
a late `authorization_decide` both lock the row and decide only what is still awaiting.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Hold
from accounts.services import hold_place, hold_release
from accounts.services.program_funding import ProgramFundsShort
from core.actors import current_actor
from core.exceptions import ValidationFailed
from core.metadata import metadata_merge
from core.metrics import DECISIONING_CALLS, DECISIONING_LATENCY, count_on_commit
from decisioning import breaker, calls
from decisioning.models import MAX_TIMEOUT_MS, DecisioningEndpoint
from decisioning.services import CallResult, ask_about_authorization

from .. import declines
from ..locks import lock_authorization, lock_stranded_authorization
from ..models import Authorization, ProgramDecided
from .authorize import (
    Decline,
    authorization_approved,
    authorization_declined_record,
    hold_expiry,
    jit_stand_in,
    program_unavailable,
)
from .funding import program_funding_add
from .held import give_back, hold_again, release

# An authorization awaiting its program longer than the longest call and a margin was left by a
# process that stopped: the recovery job decides it.
STRANDED_AFTER = timedelta(milliseconds=MAX_TIMEOUT_MS + 2000)
STRANDED = "no answer recorded: the request deciding it stopped"
# A program's own decline code: short, lower-case words (it is shown to clients as given).
MAX_DECLINE_CODE = 48


def program_to_ask(authorization: Authorization) -> bool:
    """Whether the program is still to be asked about `authorization` as `authorization_create`
    left it: a live endpoint's, awaiting; a shadow endpoint's that the breaker let through."""
    if authorization.awaiting_program:
        return True
    return (
        authorization.program_mode == DecisioningEndpoint.Mode.SHADOW
        and not authorization.program_error
    )


def authorization_ask_program(*, authorization: Authorization) -> CallResult:
    """Ask the authorization's endpoint (set by `authorization_create`) for its decision; never
    raises for what the program does. Refuses to run inside a database transaction
    (`decisioning.services.call`). Gives back the call's slot (`decisioning.calls`) as it
    returns, whatever happened."""
    endpoint = authorization.decisioning_endpoint
    try:
        available = Account.objects.values_list("available", flat=True).get(
            pk=authorization.account_id
        )
        result = ask_about_authorization(
            endpoint=endpoint, authorization=authorization, available=available
        )
    finally:
        calls.release(authorization.pk)
    DECISIONING_LATENCY.labels(mode=endpoint.mode).observe(result.latency_ms / 1000)
    return result


def authorization_decide(*, authorization: Authorization, result: CallResult) -> Authorization:
    """Apply the program's `result` (see the module docstring) and return the authorization as
    decided. One that is no longer awaiting (the recovery job decided it first) is returned as
    it is; a shadow endpoint's result is recorded on it once."""
    endpoint = authorization.decisioning_endpoint
    with transaction.atomic(savepoint=False):
        locked = lock_authorization(authorization.pk, "hold", "card__institution", "account")
        locked.decisioning_endpoint = endpoint
        if locked.program_mode == DecisioningEndpoint.Mode.SHADOW:
            if locked.program_latency_ms is None:
                answer = _record_call(locked, result, endpoint)
                locked.save(update_fields=CALL_FIELDS)
                breaker.record(endpoint, ok=answer is not None)
            return locked
        if not locked.awaiting_program:
            return locked
        answer = _record_call(locked, result, endpoint)
        if answer is None:
            _stand_in(locked, endpoint)
        elif answer["approved"]:
            _approve(locked, answer)
        else:
            _decline(locked, answer)
        # Last: the endpoint's row is the last lock an authorization takes (decisioning.breaker).
        breaker.record(endpoint, ok=answer is not None)
    return locked


def authorizations_resolve_stranded(*, now=None, batch_size: int = 100) -> int:
    """Decide, by their endpoint's `on_failure`, the authorizations left awaiting their program
    for longer than STRANDED_AFTER (their request's process stopped between the hold and the
    decision); return how many. One transaction each, rows others hold skipped (a request
    deciding its own right now): safe from several processes at once."""
    cutoff = (now or timezone.now()) - STRANDED_AFTER
    resolved = 0
    while True:
        with transaction.atomic():
            stranded = lock_stranded_authorization(created_before=cutoff)
            if stranded is None:
                return resolved
            stranded.program_error = STRANDED
            count_on_commit(
                DECISIONING_CALLS.labels(mode=stranded.program_mode, outcome="stranded")
            )
            _stand_in(stranded, stranded.decisioning_endpoint)
        resolved += 1
        if resolved >= batch_size:
            return resolved


CALL_FIELDS = ["program_latency_ms", "program_status", "program_error", "program_answer"]


def record_call(
    record: ProgramDecided,
    result: CallResult,
    endpoint: DecisioningEndpoint,
    *,
    amount: int,
    metadata: dict,
    partial: bool = True,
) -> dict | None:
    """Write what the call got on `record` (an authorization or an increment, not saved) and
    count it in the metrics; return the answer when it is a valid one, else None. `amount`:
    what was held for the decision; `partial`: whether the program may approve less (an
    increment is approved whole); `metadata`: the authorization's, that the answer's merges
    into."""
    record.program_latency_ms = result.latency_ms
    record.program_status = result.status
    answer, error = (
        (None, result.error)
        if not result.ok
        else _valid(result.answer, amount=amount, partial=partial, metadata=metadata)
    )
    record.program_error = (error or "")[:300]
    record.program_answer = result.answer if answer is not None else None
    outcome = "failed"
    if answer is not None:
        outcome = "declined"
        if answer["approved"]:
            outcome = "partial" if "amount" in answer else "approved"
    count_on_commit(DECISIONING_CALLS.labels(mode=endpoint.mode, outcome=outcome))
    return answer


def _valid(
    answer: dict, *, amount: int, partial: bool, metadata: dict
) -> tuple[dict | None, str | None]:
    """The program's answer in the domain's terms, or why it is not a valid one. `amount`,
    when approved: 1..the held amount (an amount equal to it is a full approval, not kept),
    only the held amount when `partial` is false; `declineCode`, when declined: a string of at
    most MAX_DECLINE_CODE characters; `metadata`: the client metadata rules (`core.metadata`).
    Other keys are ignored."""
    valid = {"approved": answer["approved"]}
    approved_amount = answer.get("amount")
    if approved_amount is not None and answer["approved"]:
        if isinstance(approved_amount, bool) or not isinstance(approved_amount, int):
            return None, "invalid answer: amount must be an integer"
        if not partial and approved_amount != amount:
            return None, f"invalid answer: amount must be {amount} (approved whole or declined)"
        if not 0 < approved_amount <= amount:
            return None, f"invalid answer: amount must be from 1 to {amount}"
        if approved_amount < amount:
            valid["amount"] = approved_amount
    code = answer.get("declineCode")
    if code is not None and not answer["approved"]:
        if not isinstance(code, str) or not 0 < len(code) <= MAX_DECLINE_CODE:
            return None, f"invalid answer: declineCode must be 1 to {MAX_DECLINE_CODE} characters"
        valid["decline_code"] = code
    if answer.get("metadata") is not None:
        try:
            valid["metadata"] = metadata_merge(metadata, answer["metadata"])
        except ValidationFailed as error:  # why, as a client setting it would read it
            return None, f"invalid answer: metadata: {error.details['metadata']}"
    return valid, None


def _record_call(
    authorization: Authorization, result: CallResult, endpoint: DecisioningEndpoint
) -> dict | None:
    return record_call(
        authorization,
        result,
        endpoint,
        amount=authorization.amount,
        metadata=authorization.metadata,
        partial=authorization.partial_approval,
    )


def _approve(authorization: Authorization, answer: dict) -> None:
    authorization.decided_by = Authorization.DecidedBy.PROGRAM
    _merge_metadata(authorization, answer)
    if authorization.hold_id is None:  # a JIT program's: it funds what it approves
        _fund_and_hold(authorization, answer.get("amount", authorization.amount))
        return
    if "amount" in answer:
        _reduce(authorization, answer["amount"])
    _finish(authorization, Authorization.Decision.APPROVED)
    authorization_approved(authorization)


def _fund_and_hold(authorization: Authorization, amount: int) -> None:
    """A JIT program approved `amount` (all of it, or part where the merchant takes part): the
    program's funding account pays it to the cardholder's account, then it is held, in this
    transaction (`funding.program_funding_add`). A funding account that cannot pay it: declined
    `insufficient_program_funds`, nothing funded, the usage given back."""
    try:
        program_funding_add(authorization, amount)
    except ProgramFundsShort as short:
        give_back(authorization, authorization.amount)
        authorization.decided_by = Authorization.DecidedBy.TX
        _declined(
            authorization,
            Decline(
                declines.INSUFFICIENT_PROGRAM_FUNDS,
                "The card program approved this payment, and its funding account cannot pay "
                "for it.",
                {"available": short.available, "amount": short.amount},
            ),
        )
        return
    authorization.hold = hold_place(
        account=authorization.account,
        amount=amount,
        currency=authorization.currency,
        expires_at=hold_expiry(),
        reason=f"{authorization.type} at {authorization.merchant_name}",
        actor=current_actor(),
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
    )
    if amount < authorization.amount:
        give_back(authorization, authorization.amount - amount)
        authorization.requested_amount = authorization.amount
        authorization.amount = amount
    _finish(authorization, Authorization.Decision.APPROVED)
    authorization_approved(authorization)


def _reduce(authorization: Authorization, amount: int) -> None:
    """A partial approval: the hold is replaced by one of the approved amount (a hold's amount
    never changes: PostgreSQL refuses it, `tx_hold_changed`), and the card's usage follows."""
    held = authorization.hold
    hold_release(hold=held, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    authorization.hold = hold_again(authorization, held, amount)
    give_back(authorization, authorization.amount - amount)
    if authorization.requested_amount is None:  # else TX approved part already (funds)
        authorization.requested_amount = authorization.amount
    authorization.amount = amount


def program_declined(answer: dict) -> Decline:
    """The program's valid `{approved: false, declineCode?}` as a Decline."""
    details = {}
    if "decline_code" in answer:
        details["program_decline_code"] = answer["decline_code"]
    return Decline(declines.PROGRAM_DECLINED, "The card program declined this payment.", details)


def _decline(authorization: Authorization, answer: dict) -> None:
    authorization.decided_by = Authorization.DecidedBy.PROGRAM
    _merge_metadata(authorization, answer)
    _let_go(authorization)
    _declined(authorization, program_declined(answer))


def _let_go(authorization: Authorization) -> None:
    """What a declined authorization held and counted is given back: its hold released, or,
    a JIT program's (nothing held, nothing funded), its usage."""
    if authorization.hold_id is None:
        give_back(authorization, authorization.amount)
    else:
        release(authorization)


def _declined(authorization: Authorization, decline: Decline) -> None:
    authorization.decline_code = decline.code
    authorization.decline_reason = decline.reason
    authorization.decline_details = decline.details or None
    _finish(authorization, Authorization.Decision.DECLINED)
    authorization_declined_record(authorization)


def _stand_in(authorization: Authorization, endpoint: DecisioningEndpoint) -> None:
    """No valid answer: the endpoint's `on_failure` decides. `approve` and `standin` keep TX's
    approval (its checks all ran before the call); `decline` releases the hold. A JIT
    program's authorization holds nothing yet, and nothing is funded without its answer:
    `standin` lets TX's ledger decide on the account's own funds, `approve` forces the hold
    (`_jit_stand_in`)."""
    authorization.decided_by = Authorization.DecidedBy.STANDIN
    if endpoint.on_failure == DecisioningEndpoint.OnFailure.DECLINE:
        _let_go(authorization)
        _declined(authorization, program_unavailable(authorization.program_error))
        return
    if authorization.hold_id is None:
        _jit_stand_in(authorization, endpoint)
        return
    _finish(authorization, Authorization.Decision.APPROVED)
    authorization_approved(authorization)


def _jit_stand_in(authorization: Authorization, endpoint: DecisioningEndpoint) -> None:
    """`on_failure` of a JIT program that did not answer (`authorize.jit_stand_in`, the same
    rule as when it was not called at all). `standin`: held only if the account's own funds cover
    it (in part where the merchant takes part), else declined `insufficient_funds`; `approve`:
    held whatever the account has (forced; what it takes beyond is `overdrawn_by`)."""
    account = lock_accounts([authorization.account_id])[authorization.account_id]
    try:
        forced = jit_stand_in(authorization, endpoint, account, authorization.partial_approval)
    except Decline as decline:
        give_back(authorization, authorization.amount)
        _declined(authorization, decline)
        return
    if authorization.requested_amount is not None:  # approved for what the account has
        give_back(authorization, authorization.requested_amount - authorization.amount)
    authorization.account = account
    authorization.hold = hold_place(
        account=account,
        amount=authorization.amount,
        currency=authorization.currency,
        expires_at=hold_expiry(),
        reason=f"{authorization.type} at {authorization.merchant_name}",
        actor=current_actor(),
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        forced=forced,
    )
    _finish(authorization, Authorization.Decision.APPROVED)
    authorization_approved(authorization)


def _merge_metadata(authorization: Authorization, answer: dict) -> None:
    if "metadata" in answer:
        authorization.metadata = answer["metadata"]  # merged by `_valid`


def _finish(authorization: Authorization, decision: str) -> None:
    authorization.decision = decision
    authorization.decided_at = authorization.updated_at = timezone.now()
    authorization.save(
        update_fields=[
            "decision",
            "decided_by",
            "decided_at",
            "updated_at",
            "amount",
            "requested_amount",
            "decline_code",
            "decline_reason",
            "decline_details",
            "metadata",
            "hold",
            "overdrawn_by",
            *CALL_FIELDS,
        ]
    )
