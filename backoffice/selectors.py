"""The back office's reads: the approval requests waiting for a staff user's decision, and case
work (who may be assigned a case, the cases assigned to a user, a row's case and notes)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db.models import Q, QuerySet

from institutions.staff import staff_institutions

from .models import ApprovalRequest, Case, CaseNote


def approvals_waiting_for(user, approvals: QuerySet) -> QuerySet:
    """The pending requests among `approvals` that `user` did not ask for: those they may
    decide (four eyes). The dashboard's queue and the approvals' list filter (`waiting=me`)."""
    return approvals.filter(status=ApprovalRequest.Status.PENDING).exclude(requested_by=user)


# --- Case work (docs/back-office.md, "Case work") ------------------------------------------------
def _change_permission(model) -> str:
    opts = model._meta
    return f"{opts.app_label}.change_{opts.model_name}"


def may_work_on(user, obj) -> bool:
    """Whether `user` may be assigned `obj`: an active staff user who may change its model
    (whoever may move it) and work on its institution (`institutions.staff`)."""
    if not (user.is_active and user.is_staff and user.has_perm(_change_permission(type(obj)))):
        return False
    institutions = staff_institutions(user)
    return institutions is None or institutions.filter(institution_id=obj.institution_id).exists()


def possible_assignees(rows: list) -> list:
    """The staff users who may be assigned every one of `rows` (of one model), by username."""
    if not rows:
        return []
    model = type(rows[0])
    opts = model._meta
    permission = Permission.objects.filter(
        content_type=ContentType.objects.get_for_model(model), codename=f"change_{opts.model_name}"
    )
    users = (
        get_user_model()
        .objects.filter(is_active=True, is_staff=True)
        .filter(
            Q(is_superuser=True)
            | Q(groups__permissions__in=permission)
            | Q(user_permissions__in=permission)
        )
        .distinct()
        .order_by("username")
    )
    return [user for user in users if all(may_work_on(user, row) for row in rows)]


def cases_of(model) -> QuerySet:
    return Case.objects.filter(content_type=ContentType.objects.get_for_model(model))


def assigned_to(user, model) -> QuerySet:
    """The ids of `model`'s rows assigned to `user` (the "mine" queue: a subquery of one index,
    `case_assignee_idx`)."""
    return cases_of(model).filter(assignee=user).values("object_id")


def assigned_to_nobody(queryset: QuerySet) -> QuerySet:
    """The rows of `queryset` nobody works on: no case, or a case assigned to nobody."""
    return queryset.exclude(
        pk__in=cases_of(queryset.model).filter(assignee__isnull=False).values("object_id")
    )


def case_of(obj) -> Case | None:
    return (
        cases_of(type(obj))
        .filter(object_id=obj.pk)
        .select_related("assignee", "assigned_by")
        .first()
    )


def notes_of(case: Case | None) -> list[CaseNote]:
    """The case's notes, newest first, with their authors."""
    if case is None:
        return []
    return list(case.notes.select_related("author").order_by("-id"))
