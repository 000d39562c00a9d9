"""The program decides an increment: the second half of an incremental authorization whose card
has a decisioning endpoint (docs/decisioning.md, "Increments"), as `program` is of a new
authorization, and with its parts.

`authorization_increment(ask_program=True)` has run TX's checks, held the increment (the
authorization's hold replaced by one of the new total, the usage counted: `increments.hold_more`)
and committed, leaving the increment `awaiting_program` (a live endpoint) or approved (a shadow
one). Then, with **no database transaction or row lock open**, `increment_ask_program` POSTs the
signed `authorization.increment` request, and `increment_decide` applies the answer in a second
transaction, on the authorization's row locked first (it orders everything done to an
authorization and its increments): `{approved: true}` grows the authorization by the increment
(`increments.grow`), `{approved: false}` places the old total's hold again and gives the usage
back (`increments.hold_less`), no valid answer lets the endpoint's `on_failure` decide. An
`amount` in the answer must be the increment's: an increment is approved whole or declined.
The answer's `metadata` merges into the authorization's. A hold that expired while the program
thought (the expiry job gave everything back) declines the increment `authorization_expired`.

A process that dies between the two leaves the increment awaiting: `increments_resolve_stranded`
(the same job as the authorizations') decides it by `on_failure` once it is older than
`program.STRANDED_AFTER`, exactly once: it and a late `increment_decide` both lock the
authorization and decide only what is still awaiting.
"""

from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account
from accounts.services.program_funding import ProgramFundsShort
from core.metrics import DECISIONING_CALLS, DECISIONING_LATENCY, count_on_commit
from decisioning import breaker, calls
from decisioning.models import DecisioningEndpoint
from decisioning.services import CallResult, ask_about_increment

from .. import declines
from ..locks import lock_authorization, lock_stranded_increment
from ..models import Authorization, AuthorizationIncrement
from .authorize import Decline, program_unavailable
from .funding import program_funding_add
from .held import give_back
from .increments import (
    grow,
    hold_less,
    hold_what_is_counted,
    increment_approved_record,
    increment_declined,
    increment_declined_record,
    jit_increment_stand_in,
)
from .program import CALL_FIELDS, STRANDED, STRANDED_AFTER, program_declined, record_call


def increment_program_to_ask(increment: AuthorizationIncrement) -> bool:
    """Whether the program is still to be asked about `increment` as `authorization_increment`
    left it: a live endpoint's, awaiting; a shadow endpoint's that the breaker let through."""
    if increment.awaiting_program:
        return True
    return increment.program_mode == DecisioningEndpoint.Mode.SHADOW and not increment.program_error


def increment_ask_program(*, increment: AuthorizationIncrement) -> CallResult:
    """Ask the increment's endpoint for its decision; never raises for what the program does.
    Refuses to run inside a database transaction (`decisioning.services.call`). Gives back the
    call's slot (`decisioning.calls`) as it returns, whatever happened."""
    endpoint = increment.decisioning_endpoint
    authorization = increment.authorization
    try:
        available = Account.objects.values_list("available", flat=True).get(
            pk=authorization.account_id
        )
        result = ask_about_increment(endpoint=endpoint, increment=increment, available=available)
    finally:
        calls.release(increment.pk)
    DECISIONING_LATENCY.labels(mode=endpoint.mode).observe(result.latency_ms / 1000)
    return result


def increment_decide(
    *, increment: AuthorizationIncrement, result: CallResult
) -> AuthorizationIncrement:
    """Apply the program's `result` (see the module docstring) and return the increment as
    decided. One that is no longer awaiting (the recovery job decided it first) is returned as
    it is; a shadow endpoint's result is recorded on it once."""
    endpoint = increment.decisioning_endpoint
    with transaction.atomic(savepoint=False):
        authorization = lock_authorization(
            increment.authorization_id, "hold", "card__institution", "account"
        )
        # Read once the authorization is locked: its row orders its increments' decisions.
        locked = AuthorizationIncrement.objects.get(pk=increment.pk)
        locked.authorization = authorization
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
            _stand_in(locked)
        else:
            _decide(locked, answer)
        # Last: the endpoint's row is the last lock an authorization takes (decisioning.breaker).
        breaker.record(endpoint, ok=answer is not None)
    return locked


def increments_resolve_stranded(*, now=None, batch_size: int = 100) -> int:
    """Decide, by their endpoint's `on_failure`, the increments left awaiting their program for
    longer than STRANDED_AFTER (their request's process stopped between the hold and the
    decision); return how many. One transaction each, authorizations others hold skipped:
    safe from several processes at once."""
    cutoff = (now or timezone.now()) - STRANDED_AFTER
    resolved = 0
    while True:
        with transaction.atomic():
            stranded = lock_stranded_increment(created_before=cutoff)
            if stranded is None:
                return resolved
            stranded.program_error = STRANDED
            count_on_commit(
                DECISIONING_CALLS.labels(mode=stranded.program_mode, outcome="stranded")
            )
            _stand_in(stranded)
        resolved += 1
        if resolved >= batch_size:
            return resolved


def _hold_jit_increment(increment: AuthorizationIncrement, *, forced: bool) -> Decline | None:
    """Hold a JIT program's approved increment on its authorization (usage counted already):
    its program funds it first when it approved it; None, or the Decline when the program's
    funding account cannot pay for it (nothing funded or held)."""
    authorization = increment.authorization
    if increment.decided_by == AuthorizationIncrement.DecidedBy.PROGRAM:
        try:
            program_funding_add(authorization, increment.amount)
        except ProgramFundsShort as short:
            increment.decided_by = AuthorizationIncrement.DecidedBy.TX
            return Decline(
                declines.INSUFFICIENT_PROGRAM_FUNDS,
                "The card program approved this increment, and its funding account cannot pay "
                "for it.",
                {"available": short.available, "amount": short.amount},
            )
    hold_what_is_counted(authorization, increment.amount, forced=forced)
    increment.hold = authorization.hold
    return None


def _record_call(
    increment: AuthorizationIncrement, result: CallResult, endpoint: DecisioningEndpoint
) -> dict | None:
    return record_call(
        increment,
        result,
        endpoint,
        amount=increment.amount,
        metadata=increment.authorization.metadata,
        partial=False,
    )


def _decide(increment: AuthorizationIncrement, answer: dict) -> None:
    """The program's valid answer."""
    increment.decided_by = AuthorizationIncrement.DecidedBy.PROGRAM
    authorization = increment.authorization
    if "metadata" in answer:  # merged by `program.record_call`
        authorization.metadata = answer["metadata"]
        authorization.save(update_fields=["metadata"])
    _finish(increment, None if answer["approved"] else program_declined(answer))


def _stand_in(increment: AuthorizationIncrement) -> None:
    """No valid answer: the endpoint's `on_failure` decides. `approve` and `standin` keep TX's
    approval (its checks all ran before the call); `decline` gives the increment back. A JIT
    program's increment holds nothing yet and is funded by nothing: `standin` needs the
    account's own funds, `approve` forces the hold (`increments.jit_increment_stand_in`)."""
    increment.decided_by = AuthorizationIncrement.DecidedBy.STANDIN
    endpoint = increment.decisioning_endpoint
    decline = None
    forced = False
    if endpoint.on_failure == DecisioningEndpoint.OnFailure.DECLINE:
        decline = program_unavailable(increment.program_error)
    elif increment.hold_id is None and _pending(increment):
        authorization = increment.authorization
        account = lock_accounts([authorization.account_id])[authorization.account_id]
        try:
            forced = jit_increment_stand_in(increment, endpoint, account)
        except Decline as refused:
            decline = refused
    _finish(increment, decline, forced=forced)


def _pending(increment: AuthorizationIncrement) -> bool:
    return increment.authorization.status == Authorization.Status.PENDING


def _finish(
    increment: AuthorizationIncrement, decline: Decline | None, forced: bool = False
) -> None:
    """Approve the increment (`decline` None) or decline it, on its authorization as it now
    stands, and record it with its events. A JIT program's increment (nothing held yet) is
    held when approved: funded by the program first when its program approved it
    (`insufficient_program_funds` when its funding account cannot), held whatever the account
    has when `forced`."""
    authorization = increment.authorization
    expired = not _pending(increment)
    if expired:  # the expiry job released the whole hold and gave its usage back
        decline = Decline(
            declines.AUTHORIZATION_EXPIRED,
            "The authorization's hold expired while its program decided this increment.",
            {"status": authorization.status},
        )
    jit = increment.hold_id is None
    if decline is None and jit:
        decline = _hold_jit_increment(increment, forced=forced)
    if decline is None:
        grow(authorization, increment.amount)
        increment.decision = AuthorizationIncrement.Decision.APPROVED
    else:
        if expired:
            pass  # nothing of it is held or counted any more
        elif jit:
            give_back(authorization, increment.amount)
        else:
            hold_less(authorization, increment.amount)
        increment_declined(increment, decline)
    increment.decided_at = timezone.now()
    increment.save(
        update_fields=[
            "hold",
            "decision",
            "decided_by",
            "decided_at",
            "decline_code",
            "decline_reason",
            "decline_details",
            *CALL_FIELDS,
        ]
    )
    if increment.approved:
        increment_approved_record(authorization, increment)
    else:
        increment_declined_record(authorization, increment)
