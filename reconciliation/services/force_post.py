"""Force post of a late presentment (docs/reconciliation.md, "Force post"): a `network_only`
break's resolution that clears in TX what the network has settled already, and matches it to
the row.

The row names an authorization of the institution (a `purchase` or `cash` row): pending, it is
presented for the settled amount through the clearing service (`forced`: the network has paid,
so the card's account is not asked for what it has); reversed or expired, the network's force
post is recorded on its card (`network.authorization_record_network`, a new authorization of
kind `force_post` with the old one's merchant). Either way the new entry of card clearing is
matched with the row, whatever its id, and the break is resolved (`force_posted`). A row TX
cannot clear (an id it does not know, a refund, an authorization presented already) is 409
`invalid_state_transition`, and nothing changes. Staff ask for it on the back office's breaks
queue and another staff user approves (four eyes: `backoffice.services.approvals`), as the
approver.
"""

from django.db import transaction
from django.utils import timezone

from accounts.models import Entry, StatementLine
from authorizations.models import Authorization
from authorizations.services.clearing import authorization_present
from authorizations.services.network import authorization_record_network
from core.actors import Actor
from core.exceptions import InvalidStateTransition
from events.services import emit_many, event_for
from institutions.calendar import local_date

from ..locks import lock_break, lock_reconciliation
from ..models import (
    OPEN_STATES,
    MatchedLedgerLine,
    MatchedSettlementRow,
    NetworkSettlementRow,
    ReconciliationBreak,
    ReconciliationMatch,
)
from .settlement_matching import KEY, card_clearing

FORCE_POSTED = "force_posted"
# The authorizations a force post clears: pending ones are presented, reversed or expired ones
# recorded again as the network's force post.
CLEARABLE = (
    Authorization.Status.PENDING,
    Authorization.Status.REVERSED,
    Authorization.Status.EXPIRED,
)


def _refused(why: str, state: str) -> InvalidStateTransition:
    return InvalidStateTransition(why, from_state=state, to_state=FORCE_POSTED)


def force_postable(break_: ReconciliationBreak) -> Authorization:
    """The authorization a force post of `break_` clears, as the break is now: 409
    `invalid_state_transition` for a break of another kind or resolved, or whose row TX cannot
    clear (module docstring). Asked when staff ask for a force post, and again under the
    locks when it is approved."""
    if break_.kind != ReconciliationBreak.Kind.NETWORK_ONLY:  # a kind never changes
        raise _refused(
            f"Only a network-only break (a late presentment) is force posted; this one is "
            f"{break_.kind}.",
            break_.state,
        )
    if break_.state not in OPEN_STATES:
        raise _refused(f"A {break_.state} break cannot be force posted.", break_.state)
    authorization = _authorization(break_.institution_id, break_.settlement_row)
    if authorization is None:
        raise _refused(
            "The row names no card payment of the institution TX can clear.", break_.state
        )
    if authorization.status not in CLEARABLE:
        raise _refused(
            f"Its authorization is {authorization.status}: TX has cleared it already.",
            break_.state,
        )
    return authorization


def network_only_force_post(*, break_: ReconciliationBreak, actor: Actor) -> ReconciliationBreak:
    """Clear the late presentment of a `network_only` break and resolve the break (module
    docstring). Returns the break, resolved."""
    if break_.kind != ReconciliationBreak.Kind.NETWORK_ONLY:
        force_postable(break_)  # refused before any lock: a kind never changes, and only a
        # network-only break has a settlement whose card clearing to lock
    settlement = break_.settlement
    with transaction.atomic():
        account = card_clearing(settlement)
        lock_reconciliation(account.pk if account else settlement.pk)
        row = lock_break(break_.pk)
        authorization = force_postable(row)
        settled = row.settlement_row
        if authorization.status == Authorization.Status.PENDING:
            cleared = authorization_present(
                authorization=authorization, amount=-settled.amount, actor=actor, forced=True
            )
        else:  # reversed or expired
            cleared = authorization_record_network(
                kind=Authorization.Kind.FORCE_POST,
                card=authorization.card,
                amount=-settled.amount,
                currency=authorization.currency,
                type=authorization.type,
                merchant=authorization.merchant,
                actor=actor,
            )
        entry = _presentment_entry(cleared, account or card_clearing(settlement))
        now = timezone.now()
        match = ReconciliationMatch.objects.create(
            institution_id=settlement.institution_id,
            run=row.run,
            how=ReconciliationMatch.How.KEY,
            key=KEY,
            difference=0,
            created_at=now,
        )
        MatchedSettlementRow.objects.create(settlement_row=settled, match=match)
        MatchedLedgerLine.objects.create(entry=entry, match=match)
        row.state, row.resolution = ReconciliationBreak.State.RESOLVED, FORCE_POSTED
        row.resolved_at = row.updated_at = now
        row.resolved_on = local_date(settlement.institution, now)
        row.save(update_fields=["state", "resolution", "resolved_at", "resolved_on", "updated_at"])
        data = {
            "break_id": row.pk,
            "resolution": FORCE_POSTED,
            "authorization_id": cleared.pk,
        }
        emit_many([event_for(row, "reconciliation_break.resolved", data=data, actor=actor)])
    return row


def _authorization(institution_id: str, settled: NetworkSettlementRow) -> Authorization | None:
    if settled.kind not in (NetworkSettlementRow.Kind.PURCHASE, NetworkSettlementRow.Kind.CASH):
        return None
    return (
        Authorization.objects.select_related("card__institution", "hold")
        .filter(institution_id=institution_id, pk=settled.network_transaction_id)
        .first()
    )


def _presentment_entry(authorization: Authorization, account) -> Entry:
    """Card clearing's entry of the authorization's last presentment."""
    journal_id = (
        StatementLine.objects.filter(
            authorization=authorization,
            settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
            category__isnull=True,
        )
        .order_by("-id")
        .values_list("journal_id", flat=True)
        .first()
    )
    return Entry.objects.get(account=account, journal_id=journal_id)
