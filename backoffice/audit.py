"""The audit page's reads (docs/back-office.md, "The audit page"): of a staff user's event
(`backoffice.models.StaffActivity`), the object it is about and the journal the change posted.

The events are the record: every staff action and every approval (requested, approved, rejected)
runs as an operation of the staff user, whose services emit events naming that user, in the
transaction of the change (`core.operations`, `events.services`). Which journal a change posted
is said per event type below, from the rows the services write beside the journal (an
adjustment's, a fee's, a transfer's, a reversal's, a hold's capture, a dispute's steps, an
approval's result): never guessed from times alone.
"""

from collections.abc import Callable

from django.db.models import QuerySet
from django.urls import reverse

from accounts.models import Journal
from backoffice.models import ApprovalRequest
from backoffice.search import model_of_id
from events.models import Event


def _dispute_journals(event: Event) -> QuerySet:
    # A dispute's money moves are its steps' journals. The steps of this change are those made
    # after the dispute's event before this one (any actor's: a deadline job's too) and not
    # after this one; a change that emits two events (a stage change, then the close) has its
    # steps with the first.
    before = (
        Event.objects.filter(object_id=event.object_id, id__lt=event.id)
        .order_by("-id")
        .values_list("created_at", flat=True)
        .first()
    )
    steps = {"dispute_step__dispute_id": event.object_id}
    steps["dispute_step__created_at__lte"] = event.created_at
    if before is not None:
        steps["dispute_step__created_at__gt"] = before
    return Journal.objects.filter(**steps)


def _approval_journals(event: Event) -> QuerySet:
    # An approved request's change was made in the approval's transaction, as the approver:
    # its result is the adjustment or the waived fee (the other kinds move no money).
    result = event.data.get("result_id")
    kind = event.data.get("kind")
    if event.type != "approval.approved" or not result:
        return Journal.objects.none()
    if kind == ApprovalRequest.Kind.ADJUSTMENT:
        return Journal.objects.filter(adjustment=result)
    if kind == ApprovalRequest.Kind.FEE_WAIVER:
        return Journal.objects.filter(waived_fee=result)
    return Journal.objects.none()


# Event type -> the journals the change it records posted. A type not here posts none.
JOURNALS: dict[str, Callable[[Event], QuerySet]] = {
    "adjustment.posted": lambda event: Journal.objects.filter(adjustment=event.object_id),
    "fee.charged": lambda event: Journal.objects.filter(fee=event.object_id),
    "fee.waived": lambda event: Journal.objects.filter(waived_fee=event.object_id),
    "transfer.posted": lambda event: Journal.objects.filter(transfer=event.object_id),
    "transfer.reversed": lambda event: Journal.objects.filter(
        transfer_reversal=event.data.get("reversal_id")
    ),
    "hold.captured": lambda event: Journal.objects.filter(captured_hold=event.object_id),
    "dispute.updated": _dispute_journals,
    "dispute.stage_changed": _dispute_journals,
    "approval.approved": _approval_journals,
}


def journals_of(event: Event) -> list[Journal]:
    """The journals the change `event` records posted, oldest first (none for most)."""
    journals = JOURNALS.get(event.type)
    return [] if journals is None else list(journals(event).order_by("id"))


def object_url(event: Event) -> str | None:
    """The back office's page of the row `event` is about, or None (a kind it has no page
    for). From the id's prefix, without reading the row."""
    model = model_of_id(event.object_id)
    if model is None:
        return None
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[event.object_id])
