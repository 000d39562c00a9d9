"""The upgrade that brings the institution limit locks nobody out
(institutions/migrations/0004_existing_staff_keep_every_institution.py): staff accounts that
exist then keep every institution; superusers need nothing; staff made afterwards start with
none (docs/back-office.md).

The upgrade runs in a database of its own, migrated from empty along the dependency chain of
the migrations named only: taking the test database back to before 0004 would unapply, and
then apply again, every migration made since, which depends on it (45 s of the suite at
9ffb771, growing with each migration)."""

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from institutions.staff import staff_institutions

BEFORE = [("institutions", "0003_staff_roles")]
AFTER = [("institutions", "0004_existing_staff_keep_every_institution")]


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.fixture
def own_database():
    """The default connection on an empty database beside the test database (the migrations'
    code uses the default alias), then back on the test database, the other dropped."""
    test_name = connection.settings_dict["NAME"]
    name = f"{test_name}_upgrade"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    connection.settings_dict["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = test_name
        ContentType.objects.clear_cache()  # its ids were the other database's
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.mark.django_db(transaction=True)
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
