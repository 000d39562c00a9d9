"""A transfer's staff user and hold, and a batch's and a reversal's staff user, are indexed only
where they are set: the API makes nearly every row, with no user, and a transfer posted at once
has no hold, yet the full indexes took an entry for every null (two of a transfer's eight). The
partial ones serve every lookup by a user or a hold (an equality implies the column is not null),
and `transfer_hold_unique` keeps one transfer per hold.

Built CONCURRENTLY, then the old ones dropped CONCURRENTLY: every transfer request writes these
tables, and a plain CREATE or DROP INDEX would hold its lock until the running ones end. No IF NOT
EXISTS on the new ones: a build that failed leaves an INVALID index, which must stop the rerun,
not pass for built. The hold's old index backs a UNIQUE constraint (Django's one-to-one field),
which only ALTER TABLE can drop: a catalog change, taken under a short `lock_timeout` so that it
fails (and is rerun) rather than queue every request behind a long transaction."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _user_field():
    return models.ForeignKey(
        blank=True,
        db_index=False,
        null=True,
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to=settings.AUTH_USER_MODEL,
    )


def _user_index(name):
    return models.Index(
        condition=models.Q(("created_by_user__isnull", False)),
        fields=["created_by_user"],
        name=name,
    )


def _swap(table, old, new):
    """The partial index `new` on `created_by_user_id` built, then the full `old` dropped."""
    create_new = (
        f"CREATE INDEX CONCURRENTLY {new} ON {table} (created_by_user_id)"
        " WHERE created_by_user_id IS NOT NULL"
    )
    drop_new = f"DROP INDEX CONCURRENTLY IF EXISTS {new}"
    return [
        migrations.RunSQL(create_new, reverse_sql=drop_new),
        migrations.RunSQL(
            f"DROP INDEX CONCURRENTLY IF EXISTS {old}",
            reverse_sql=f"CREATE INDEX CONCURRENTLY {old} ON {table} (created_by_user_id)",
        ),
    ]


class Migration(migrations.Migration):
    atomic = False  # CREATE / DROP INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("transfers", "0008_plain_names"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transfer", name="created_by_user", field=_user_field()
                ),
                migrations.AlterField(
                    model_name="transferbatch", name="created_by_user", field=_user_field()
                ),
                migrations.AlterField(
                    model_name="transferreversal", name="created_by_user", field=_user_field()
                ),
                migrations.AddIndex(
                    model_name="transfer", index=_user_index("transfer_created_by_user_idx")
                ),
                migrations.AddIndex(
                    model_name="transferbatch", index=_user_index("batch_created_by_user_idx")
                ),
                migrations.AddIndex(
                    model_name="transferreversal",
                    index=_user_index("reversal_created_by_user_idx"),
                ),
                migrations.AlterField(
                    model_name="transfer",
                    name="hold",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="transfer",
                        to="accounts.hold",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="transfer",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("hold__isnull", False)),
                        fields=("hold",),
                        name="transfer_hold_unique",
                    ),
                ),
            ],
            database_operations=[
                *_swap(
                    "transfers_transfer",
                    "transfers_transfer_created_by_user_id_ee2ebfe2",
                    "transfer_created_by_user_idx",
                ),
                *_swap(
                    "transfers_transferbatch",
                    "transfers_transferbatch_created_by_user_id_901a4da4",
                    "batch_created_by_user_idx",
                ),
                *_swap(
                    "transfers_transferreversal",
                    "transfers_transferreversal_created_by_user_id_89c7a372",
                    "reversal_created_by_user_idx",
                ),
                migrations.RunSQL(
                    "CREATE UNIQUE INDEX CONCURRENTLY transfer_hold_unique"
                    " ON transfers_transfer (hold_id) WHERE hold_id IS NOT NULL",
                    reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS transfer_hold_unique",
                ),
                # One string, so one implicit transaction: SET LOCAL holds for the ALTER only.
                migrations.RunSQL(
                    "SET LOCAL lock_timeout = '5s';"
                    " ALTER TABLE transfers_transfer"
                    " DROP CONSTRAINT IF EXISTS transfers_transfer_hold_id_key",
                    reverse_sql=[
                        "CREATE UNIQUE INDEX CONCURRENTLY transfers_transfer_hold_id_key"
                        " ON transfers_transfer (hold_id)",
                        "ALTER TABLE transfers_transfer ADD CONSTRAINT"
                        " transfers_transfer_hold_id_key UNIQUE USING INDEX"
                        " transfers_transfer_hold_id_key",
                    ],
                ),
            ],
        ),
    ]
