"""What a customer tells its bank about SEPA direct debits from one of its accounts
(docs/payments.md, "Inbound direct debits"): the **mandates** it gave creditors (a creditor's
SEPA identifier and the mandate reference) and the **creditors it blocks** (by identifier).
The clearing's collections of the account are checked against both (`inbound_debits`).

Each is made and cancelled atomically with its event (`debtor_mandate.created`,
`.cancelled`; `blocked_creditor.created`, `.cancelled`), the actor's. One active mandate per
creditor and reference, one active block per creditor on an account (unique indexes: 422
`duplicate_reference`, also when two requests race). A closed account takes neither (422
`account_not_active`): no collection reaches it.

Creditor identifiers are compared without their creditor business code (positions 5 to 7),
which the EPC lets a creditor change without changing who it is (EPC262-08).
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.locks import lock_account
from accounts.models import Account
from accounts.selectors import account_get
from core.actors import Actor
from core.exceptions import AccountNotActive, DuplicateReference, InvalidStateTransition
from core.operations import Outcome, changed
from core.rows import constraint_of, new_row, row_update
from events.services import emit_for
from institutions.models import Institution

from .. import sepa
from ..locks import lock_register_row
from ..models import BlockedCreditor, DebtorMandate
from .stop_payments import reason_checked

ACTIVE, CANCELLED = DebtorMandate.Status.ACTIVE, DebtorMandate.Status.CANCELLED


def creditor_key(identifier: str) -> str:
    """A creditor identifier as it is compared: without its business code (module docstring)."""
    return identifier[:4] + identifier[7:]


def debtor_mandate_create(
    *,
    institution: Institution,
    account_id: str,
    creditor_identifier: str,
    mandate_reference: str,
    actor: Actor,
) -> DebtorMandate:
    """A mandate the account's customer gave the creditor (module docstring). 404 for an
    account that is not a customer account of the institution; 400 for an identifier or
    reference that is not SEPA's; 422 `account_not_active` (closed), `duplicate_reference`
    (an active mandate of that creditor and reference already)."""
    identifier = sepa.checked_creditor_identifier(creditor_identifier)
    reference = sepa.checked_mandate_reference(mandate_reference)
    account = account_get(institution=institution, account_id=account_id)
    with transaction.atomic(savepoint=False):
        account = _open(account)
        mandate = new_row(
            DebtorMandate,
            institution=institution,
            account=account,
            creditor_identifier=identifier,
            mandate_reference=reference,
            **actor.stamp("created_by"),
        )
        _inserted(mandate, "debtor_mandate_active_once")
        emit_for(mandate, "debtor_mandate.created", data=_mandate_data(mandate), actor=actor)
    return mandate


def debtor_mandate_cancel(
    *, mandate: DebtorMandate, reason: str = "", actor: Actor
) -> Outcome[DebtorMandate]:
    """The mandate ends: the creditor's collections under it are rejected MD01. 409
    `invalid_state_transition` when it is cancelled already."""
    return _cancel(mandate, reason, actor, "debtor_mandate.cancelled", _mandate_data)


def blocked_creditor_create(
    *, institution: Institution, account_id: str, creditor_identifier: str, actor: Actor
) -> BlockedCreditor:
    """The creditor blocked on the account (module docstring): 404, 400 and 422 as a
    mandate's (`duplicate_reference`: blocked already)."""
    identifier = sepa.checked_creditor_identifier(creditor_identifier)
    account = account_get(institution=institution, account_id=account_id)
    with transaction.atomic(savepoint=False):
        account = _open(account)
        blocked = new_row(
            BlockedCreditor,
            institution=institution,
            account=account,
            creditor_identifier=identifier,
            **actor.stamp("created_by"),
        )
        _inserted(blocked, "blocked_creditor_active_once")
        emit_for(blocked, "blocked_creditor.created", data=_blocked_data(blocked), actor=actor)
    return blocked


def blocked_creditor_cancel(
    *, blocked: BlockedCreditor, reason: str = "", actor: Actor
) -> Outcome[BlockedCreditor]:
    """The block ends: the creditor's collections reach the account again (under a mandate).
    409 `invalid_state_transition` when it is cancelled already."""
    return _cancel(blocked, reason, actor, "blocked_creditor.cancelled", _blocked_data)


def register_of(account_id: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The account's active blocks (creditor keys) and mandates (creditor key, reference)."""
    blocked = BlockedCreditor.objects.filter(account_id=account_id, status=ACTIVE)
    mandates = DebtorMandate.objects.filter(account_id=account_id, status=ACTIVE)
    return (
        {creditor_key(each) for each in blocked.values_list("creditor_identifier", flat=True)},
        {
            (creditor_key(identifier), reference)
            for identifier, reference in mandates.values_list(
                "creditor_identifier", "mandate_reference"
            )
        },
    )


def _open(account: Account) -> Account:
    # The account's row, so that a close racing this request is seen.
    account = lock_account(account.pk)
    if account.status == Account.Status.CLOSED:
        raise AccountNotActive(
            "The account is closed: no collection reaches it.",
            details={"account_id": account.pk, "status": account.status},
        )
    return account


def _inserted(row, constraint: str) -> None:
    try:
        with transaction.atomic():
            row.save(force_insert=True)
    except IntegrityError as error:
        if constraint_of(error) != constraint:
            raise
        raise DuplicateReference(
            "The account has this creditor's active entry already.",
            details={"creditor_identifier": row.creditor_identifier},
        ) from None


def _cancel(row, reason: str, actor: Actor, event: str, data_of) -> Outcome:
    reason = reason_checked(reason)
    with transaction.atomic(savepoint=False):
        row = lock_register_row(row)
        if row.status != ACTIVE:
            raise InvalidStateTransition(
                f"The {row._meta.verbose_name} is {row.status}.",
                from_state=row.status,
                to_state=CANCELLED,
            )
        row_update(
            row,
            {"status": CANCELLED, "cancelled_at": timezone.now(), "cancelled_reason": reason},
        )
        emit_for(row, event, data=data_of(row), actor=actor)
    return changed(row, ACTIVE)


def _mandate_data(mandate: DebtorMandate) -> dict:
    return {
        "debtor_mandate_id": mandate.pk,
        "account_id": mandate.account_id,
        "creditor_identifier": mandate.creditor_identifier,
        "mandate_reference": mandate.mandate_reference,
        "status": mandate.status,
    }


def _blocked_data(blocked: BlockedCreditor) -> dict:
    return {
        "blocked_creditor_id": blocked.pk,
        "account_id": blocked.account_id,
        "creditor_identifier": blocked.creditor_identifier,
        "status": blocked.status,
    }
