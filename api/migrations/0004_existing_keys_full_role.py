"""Keys issued before scopes covered every operation keep working: each gets the `full` role's
scopes plus what it had (cards:sensitive)."""

from django.db import migrations

# The `full` role as it was when scopes were introduced (institutions.scopes.ROLES may change later).
FULL = [
    "accounts:write",
    "cards:pin",
    "cards:write",
    "customers:write",
    "money:adjust",
    "money:write",
    "monitoring:write",
    "read",
    "webhooks:write",
]


def grant_full(apps, schema_editor):
    ApiKey = apps.get_model("api", "ApiKey")
    for api_key in ApiKey.objects.all().only("id", "scopes"):
        api_key.scopes = sorted(set(FULL) | set(api_key.scopes))
        api_key.save(update_fields=["scopes"])


class Migration(migrations.Migration):
    dependencies = [("api", "0003_institution_time_zone")]

    operations = [migrations.RunPython(grant_full, migrations.RunPython.noop)]
