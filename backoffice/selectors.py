"""The back office's reads: the approval requests waiting for a staff user's decision."""

from django.db.models import QuerySet

from .models import ApprovalRequest


def approvals_waiting_for(user, approvals: QuerySet) -> QuerySet:
    """The pending requests among `approvals` that `user` did not ask for: those they may
    decide (four eyes). The dashboard's queue and the approvals' list filter (`waiting=me`)."""
    return approvals.filter(status=ApprovalRequest.Status.PENDING).exclude(requested_by=user)
