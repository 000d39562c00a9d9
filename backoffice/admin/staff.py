"""The staff's own records, for whoever investigates them: the lockouts of staff usernames and
the security events of staff accounts (docs/back-office.md, "Lockouts" and "Signing in")."""

from django.contrib import admin

from backoffice.kit import ReadOnlyModelAdmin
from backoffice.models import SignInLockout, StaffEvent


@admin.register(SignInLockout)
class SignInLockoutAdmin(ReadOnlyModelAdmin):
    """The lockouts of staff usernames (backoffice.lockouts), for whoever investigates them:
    superusers, or a group an administrator gives the view permission. Lifting a lockout is
    `manage.py axes_reset_username` or deleting the username's rows under "Access attempts"
    (docs/back-office.md)."""

    institution_path = None  # a staff username belongs to no institution
    list_display = ("username", "started_at", "ip_address", "refused_attempts", "last_refused_at")
    search_fields = ("=username",)
    date_hierarchy = "started_at"
    ordering = ("-started_at",)


@admin.register(StaffEvent)
class StaffEventAdmin(ReadOnlyModelAdmin):
    """The security events of staff accounts (backoffice.staff_events): enrolments, resets,
    renewed recovery codes, card numbers guessed in the search. Read-only, for whoever
    investigates them (superusers, or a group given the view permission)."""

    institution_path = None  # a staff account belongs to no institution
    list_display = ("id", "type", "user", "by", "created_at")
    list_filter = ("type",)
    list_select_related = ("user", "by")
    search_fields = ("=user__username", "=id")
    date_hierarchy = "created_at"


# The second factor's devices, recovery codes and enrolment tokens have no admin: they are
# made by enrolment and the commands and removed by `manage.py reset_second_factor`
# (backoffice.second_factor), never edited or shown here. Their events are above.
