"""Which institutions a staff user may work on in the back office (docs/back-office.md).

The back office's bases (`backoffice.kit.InstitutionLimit`) ask this: the back office stands
above this app and imports it.
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
