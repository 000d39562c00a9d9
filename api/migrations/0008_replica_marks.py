"""Read-your-writes marks (api.replicas, docs/read-replicas.md): one row per API key that wrote.

Their own table rather than Django's cache: the database cache culls a third of its entries
past MAX_ENTRIES (300 by default), which dropped the marks of busy institutions. This table is
never culled; a periodic job deletes the expired rows.

UNLOGGED: every write request upserts its key's row, and an unlogged table's changes skip the
WAL (the upsert's commit does not wait for a flush) and are not copied to standbys, where they
would be of no use (marks are read on the primary only). After a crash of the primary the table
is empty: for about DATABASE_REPLICA_MAX_LAG_SECONDS the keys that wrote just before it rely on
the lag bound alone. No index on `expires_at`: the upserts stay heap-only (HOT) updates, and
the hourly purge reads a table of one row per recently writing key. A fill factor of 70 leaves
room on each page for those updates.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("api", "0007_idempotency_claim_function")]

    operations = [
        migrations.CreateModel(
            name="ReplicaMark",
            fields=[
                ("key_id", models.CharField(max_length=40, primary_key=True, serialize=False)),
                ("lsn", models.BigIntegerField()),
                ("expires_at", models.DateTimeField()),
            ],
            options={"db_table": "api_replica_mark"},
        ),
        migrations.RunSQL(
            "ALTER TABLE api_replica_mark SET UNLOGGED, SET (fillfactor = 70)",
            "ALTER TABLE api_replica_mark SET LOGGED, RESET (fillfactor)",
        ),
    ]
