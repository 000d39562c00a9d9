"""Staff accounts that exist when the institution limit lands keep what they had: every
institution (the permission `work_on_all_institutions`), until a superuser narrows them with
"Institution access" rows and takes the permission away. Staff made afterwards start with no
institution (docs/back-office.md): an upgrade locks nobody out, a new account is granted."""

from django.db import migrations

PERMISSION = ("institutions", "work_on_all_institutions")


def grant_existing_staff(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    User = apps.get_model("auth", "User")
    app_label, codename = PERMISSION
    # 0003 made the permissions of every app, this one's included.
    permission = Permission.objects.get(content_type__app_label=app_label, codename=codename)
    for user in User.objects.filter(is_staff=True, is_superuser=False):
        user.user_permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [("institutions", "0003_staff_roles")]

    # Backwards: nothing to undo that the limit's own removal (0002 backwards) does not.
    operations = [migrations.RunPython(grant_existing_staff, migrations.RunPython.noop)]
