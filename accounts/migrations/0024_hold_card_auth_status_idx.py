"""GET /card-authorizations?status=: an authorization's status is its hold's, so the holds of
card authorizations get a partial index on (institution, status), built CONCURRENTLY (holds take
writes while a bank's existing rows are indexed)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("accounts", "0023_hold_changes"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="hold",
            index=models.Index(
                condition=models.Q(("purpose", "card_authorization")),
                fields=["institution", "status"],
                name="hold_card_auth_status_idx",
            ),
        ),
    ]
