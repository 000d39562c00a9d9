"""The rate limiter's counters (api.ratelimit): one row per bucket and fixed window.

UNLOGGED: the counters are disposable, so their hot-path upserts skip the WAL (and are not
copied to standbys); after a crash PostgreSQL empties the table, which at worst grants every
client a fresh window once. A fill factor of 70 leaves room on each page for the in-place (HOT)
updates every counted request makes.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("api", "0004_existing_keys_full_role")]

    operations = [
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "bucket",
                        "window_start",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("bucket", models.CharField(max_length=120)),
                ("window_start", models.BigIntegerField()),
                ("count", models.IntegerField()),
            ],
            options={"db_table": "api_rate_counter"},
        ),
        migrations.RunSQL(
            "ALTER TABLE api_rate_counter SET UNLOGGED, SET (fillfactor = 70)",
            "ALTER TABLE api_rate_counter SET LOGGED, RESET (fillfactor)",
        ),
    ]
