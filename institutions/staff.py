"""Which institutions a staff user may work on in the back office (docs/back-office.md).

The admin's bases (`core.admin.InstitutionLimit`) ask this through the function registered
when Django starts, since `core` is below this app.
"""

from .models import InstitutionAccess

ALL_INSTITUTIONS = "institutions.work_on_all_institutions"


def staff_institutions(user):
    """None when `user` works on every institution (a superuser, or granted
    `work_on_all_institutions`); else the ids of their `InstitutionAccess` rows, as a queryset
    the caller filters with (one subquery, no extra round trip). No row: no institution."""
    if user.is_superuser or user.has_perm(ALL_INSTITUTIONS):
        return None
    return InstitutionAccess.objects.filter(user_id=user.pk).values("institution_id")
