"""The row locks of disputes (docs/design.md section 2). A dispute is the operation's own row:
locked first, then its authorization (whose presented amount it shares with returns and the
other disputes), then the accounts its money moves (docs/money.md, "Locking")."""

from .models import Dispute


def lock_dispute(dispute_id: str) -> Dispute:
    """The dispute, its row locked until the transaction ends, read once locked with what its
    steps read."""
    Dispute.objects.select_for_update().filter(pk=dispute_id).values_list("pk", flat=True).get()
    return Dispute.objects.select_related("institution", "authorization", "card").get(pk=dispute_id)


def lock_dispute_unless_busy(dispute_id: str) -> Dispute | None:
    """The dispute, its row locked, with its institution; None when another transaction holds
    it (SKIP LOCKED: the deadline job leaves a dispute that is moving right now to its next
    run)."""
    return (
        Dispute.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("institution")
        .filter(pk=dispute_id)
        .first()
    )
