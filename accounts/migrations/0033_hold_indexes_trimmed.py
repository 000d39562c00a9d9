"""A hold loses three index entries of the ten it took: its account's and its institution's own
indexes (hold_account_idx and hold_institution_idx start with the same columns and serve every
lookup by them), and its staff user's full index, replaced by a partial one: a card
authorization's hold, nearly every hold, has no user, and the full index took an entry for each
of those nulls (issue 35; the pattern of transfers 0009).

Built CONCURRENTLY, then the old ones dropped CONCURRENTLY: every card authorization writes this
table, and a plain CREATE or DROP INDEX would hold its lock until the running ones end. No IF NOT
EXISTS on the new one: a build that failed leaves an INVALID index, which must stop the rerun,
not pass for built."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _dropped(name: str, column: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"DROP INDEX CONCURRENTLY IF EXISTS {name}",
        reverse_sql=f"CREATE INDEX CONCURRENTLY {name} ON accounts_hold ({column})",
    )


class Migration(migrations.Migration):
    atomic = False  # CREATE / DROP INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("accounts", "0032_plain_names"),
        ("institutions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="hold",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="holds",
                        to="accounts.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="hold",
                    name="institution",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="holds",
                        to="institutions.institution",
                    ),
                ),
                migrations.AlterField(
                    model_name="hold",
                    name="placed_by_user",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AddIndex(
                    model_name="hold",
                    index=models.Index(
                        condition=models.Q(("placed_by_user__isnull", False)),
                        fields=["placed_by_user"],
                        name="hold_placed_by_user_idx",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "CREATE INDEX CONCURRENTLY hold_placed_by_user_idx ON accounts_hold"
                    " (placed_by_user_id) WHERE placed_by_user_id IS NOT NULL",
                    reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS hold_placed_by_user_idx",
                ),
                _dropped("accounts_hold_placed_by_user_id_0e78db12", "placed_by_user_id"),
                _dropped("accounts_hold_account_id_ea0631c7", "account_id"),
                _dropped("accounts_hold_institution_id_23d9a45e", "institution_id"),
            ],
        ),
    ]
