"""The back office's work queues: what staff should look at now, counted, each count a link to
the changelist that lists exactly those rows (docs/back-office.md).

Each count is taken through the model's registered admin (`get_queryset`), so it holds the
same rows the linked list shows: the staff user's institutions only (`backoffice.kit`'s
institution limit), and no queue at all for a model they may not view. Each is one COUNT on
an indexed column or a small table.
"""

from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone

from accounts.models import Hold
from accounts.selectors import holds_expiring_today
from backoffice.case_kinds import CASE_KINDS
from backoffice.models import ApprovalRequest
from backoffice.selectors import approvals_waiting_for, assigned_to
from cards.models import PanResolutionFailure
from disputes.models import Dispute
from disputes.selectors import due_dispute_ids
from monitoring.models import MonitoringAlert
from reconciliation.models import ReconciliationBreak
from webhooks.models import WebhookDelivery


@dataclass(frozen=True)
class Queue:
    name: str
    count: int
    url: str
    explanation: str


def _rows(request, model):
    """`model`'s rows as its admin shows them to this user; None when they may not view it."""
    model_admin = admin.site._registry.get(model)
    if model_admin is None or not model_admin.has_view_or_change_permission(request):
        return None
    return model_admin.get_queryset(request).order_by()


def _changelist(model, **filters) -> str:
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


def _status_queue(request, model, status, name: str, explanation: str) -> Queue | None:
    """The rows of `model` in `status`: a queue that is one status of one model."""
    rows = _rows(request, model)
    if rows is None:
        return None
    return Queue(
        name,
        rows.filter(status=status).count(),
        _changelist(model, status__exact=status),
        explanation,
    )


def _open_alerts(request) -> Queue | None:
    return _status_queue(
        request,
        MonitoringAlert,
        MonitoringAlert.Status.OPEN,
        "Open monitoring alerts",
        "Raised by the monitoring rules; resolve each with a note once checked.",
    )


def _failed_deliveries(request) -> Queue | None:
    return _status_queue(
        request,
        WebhookDelivery,
        WebhookDelivery.Status.FAILED,
        "Failed webhook deliveries",
        "Retries exhausted: the institution's endpoint did not accept them. Retry once fixed.",
    )


def _holds_expiring_today(request) -> Queue | None:
    holds = _rows(request, Hold)
    if holds is None:
        return None
    return Queue(
        "Holds expiring today",
        holds_expiring_today(holds).count(),
        _changelist(Hold, expires="today"),
        "Active holds whose expiry falls on today's date in their institution's time zone.",
    )


def _pan_guessing(request) -> Queue | None:
    failures = _rows(request, PanResolutionFailure)
    if failures is None:
        return None
    since = timezone.now() - timedelta(seconds=settings.PAN_GUESSING_WINDOW_SECONDS)
    # An API key's failures or a staff user's (the search): one of the two is set on each row.
    subjects = (
        failures.filter(created_at__gt=since)
        .values("api_key_id", "staff_user_id")
        .annotate(failures=Count("id"))
        .filter(failures__gte=settings.PAN_GUESSING_MAX_FAILURES)
    )
    return Queue(
        "API keys and staff users suspected of PAN guessing",
        subjects.count(),
        _changelist(PanResolutionFailure, created_at__gt=since.isoformat()),
        f"Keys and staff users with at least {settings.PAN_GUESSING_MAX_FAILURES} card numbers "
        "matching no card in the guessing window: refused on every PAN operation (staff: no "
        "card-number search) until it passes. The link lists the window's failures.",
    )


def _disputes_due(request) -> Queue | None:
    disputes = _rows(request, Dispute)
    if disputes is None:
        return None
    return Queue(
        "Disputes due",
        disputes.filter(pk__in=due_dispute_ids()).count(),
        _changelist(Dispute, due="yes"),
        "A deadline not met (provisional credit, network filing, resolution) is 2 business "
        "days away or less, or passed (docs/disputes.md).",
    )


def _approvals_waiting(request) -> Queue | None:
    """Pending requests the user may decide: someone else's (four eyes), for a user who may
    approve (`change_approvalrequest`)."""
    approvals = _rows(request, ApprovalRequest)
    if approvals is None or not admin.site._registry[ApprovalRequest].has_change_permission(
        request
    ):
        return None
    return Queue(
        "Approvals waiting",
        approvals_waiting_for(request.user, approvals).count(),
        _changelist(ApprovalRequest, waiting="me"),
        "Adjustments and fee waivers another staff user asked for: approve (the change is "
        "made then, as you) or reject, with a reason. Your own requests wait for someone else.",
    )


def _mine(model, name: str, explanation: str):
    """The open rows of `model` (a case: `backoffice.case_kinds`) assigned to the user: their
    "mine" queue, for a user who may work on them (change `model`)."""

    def queue(request) -> Queue | None:
        rows = _rows(request, model)
        if rows is None or not admin.site._registry[model].has_change_permission(request):
            return None
        return Queue(
            name,
            rows.filter(CASE_KINDS[model].open, pk__in=assigned_to(request.user, model)).count(),
            _changelist(model, assigned="me"),
            explanation,
        )

    return queue


_my_disputes = _mine(
    Dispute,
    "Disputes assigned to me",
    "Open disputes you were assigned (or took): their notes and history are on each page.",
)
_my_alerts = _mine(
    MonitoringAlert,
    "Monitoring alerts assigned to me",
    "Open alerts you were assigned (or took): add notes as you check, resolve once decided.",
)
_my_breaks = _mine(
    ReconciliationBreak,
    "Reconciliation breaks assigned to me",
    "Open breaks you were assigned (or took): the statement line beside the ledger lines, "
    "resolved on each page.",
)

QUEUES = [
    _my_disputes,
    _my_alerts,
    _my_breaks,
    _approvals_waiting,
    _open_alerts,
    _disputes_due,
    _failed_deliveries,
    _holds_expiring_today,
    _pan_guessing,
]


def work_queues(request) -> list[Queue]:
    """The queues this staff user may see, in the order staff should work them."""
    return [queue for make in QUEUES if (queue := make(request)) is not None]
