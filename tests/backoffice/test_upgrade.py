"""The upgrade that brings the institution limit locks nobody out
(institutions/migrations/0004_existing_staff_keep_every_institution.py): staff accounts that
exist then keep every institution; superusers need nothing; staff made afterwards start with
none (docs/back-office.md).

The upgrade runs in a database of its own (tests/own_database.py), migrated from empty along
the dependency chain of the migrations named only."""

import pytest
from django.contrib.auth.models import User

from institutions.staff import staff_institutions
from tests.own_database import migrate

BEFORE = [("institutions", "0003_staff_roles")]
AFTER = [("institutions", "0004_existing_staff_keep_every_institution")]


@pytest.mark.usefixtures("own_database")
def test_staff_existing_at_the_upgrade_keep_every_institution_and_new_staff_start_with_none():
    migrate(BEFORE)
    existing = User.objects.create_user("existing", is_staff=True)
    admin = User.objects.create_superuser("admin")
    customer_facing = User.objects.create_user("not-staff")  # no admin login at all
    migrate(AFTER)
    newcomer = User.objects.create_user("newcomer", is_staff=True)

    def reloaded(user):  # permissions are cached on the instance
        return User.objects.get(pk=user.pk)

    assert staff_institutions(reloaded(existing)) is None  # every institution, as before
    assert staff_institutions(reloaded(admin)) is None
    assert not reloaded(admin).user_permissions.exists()
    assert not reloaded(customer_facing).user_permissions.exists()
    assert list(staff_institutions(reloaded(newcomer))) == []  # granted, never inferred
