"""What a just-in-time program funds for one authorization (docs/decisioning.md, "Just-in-time
funding"; the moves themselves: `accounts.services.program_funding`).

An authorization its JIT program approved (`program_mode` jit, `decided_by` program) is funded
when approved: the approved amount moves from the program's funding account to the cardholder's
account, then it is held (`program_funding_add`, before the hold: the account held nothing).
From then on, what the program still funds (`program_funded - program_defunded`) is what the
payment still needs: **held now + presented - returned**. Every change of those calls
`program_funding_follow`, which gives the surplus back by the same path (a reversal, an expiry,
a final presentment below the hold, a merchant refund); what a payment needs beyond it (a
presentment above the hold, an approved increment) is funded first by `program_funding_add`.
`verify_ledger` checks the equation for every such authorization.

An authorization decided otherwise (TX alone, a stand-in under `on_failure`, the network's
advice) is not the program's to fund: both functions leave it alone.
"""

from accounts.models import Hold
from accounts.services.program_funding import program_defund, program_fund
from decisioning.models import DecisioningEndpoint

from ..models import Authorization


def is_program_funded(authorization: Authorization) -> bool:
    return (
        authorization.program_mode == DecisioningEndpoint.Mode.JIT
        and authorization.decided_by == Authorization.DecidedBy.PROGRAM
    )


def needed(authorization: Authorization) -> int:
    """What the payment still needs of its funding: held now, plus presented, less returned."""
    hold = authorization.hold
    held = hold.amount if hold is not None and hold.status == Hold.Status.ACTIVE else 0
    return held + (authorization.presented_amount or 0) - authorization.returned_amount


def program_funding_add(authorization: Authorization, amount: int) -> None:
    """Fund `amount` more of the authorization from its program's funding account, before what
    needs it is held or captured (`ProgramFundsShort` when the program has not put up enough:
    nothing written). The caller saves nothing more: the column is written here."""
    program_fund(account=authorization.account, amount=amount, authorization=authorization)
    authorization.program_funded += amount
    Authorization.objects.filter(pk=authorization.pk).update(
        program_funded=authorization.program_funded
    )


def program_funding_follow(authorization: Authorization) -> None:
    """Give back to the program what it funds beyond what the authorization still needs
    (`needed`), after a change of its hold, presentment or returns. Nothing for an
    authorization its program did not fund."""
    if not is_program_funded(authorization):
        return
    surplus = authorization.program_funded - authorization.program_defunded - needed(authorization)
    if surplus < 0:
        raise RuntimeError(
            f"{authorization.pk} needs {-surplus} more than its program funded: fund it first "
            "(program_funding_add)."
        )
    if surplus == 0:
        return
    program_defund(account=authorization.account, amount=surplus, authorization=authorization)
    authorization.program_defunded += surplus
    Authorization.objects.filter(pk=authorization.pk).update(
        program_defunded=authorization.program_defunded
    )
