"""The row locks of disputes (STYLE.md, Concurrency). A dispute is the operation's own row:
locked first, then its authorization (whose presented amount it shares with returns and the
other disputes), then the accounts its money moves (docs/money.md, "Locking")."""

from .models import Dispute


def lock_dispute(dispute_id: str) -> Dispute:
    """The dispute, its row locked until the transaction ends, read once locked with what its
    steps read."""
    Dispute.objects.select_for_update().filter(pk=dispute_id).values_list("pk", flat=True).get()
    return Dispute.objects.select_related("institution", "authorization", "card").get(pk=dispute_id)
