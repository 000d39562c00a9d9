"""Drop the `_like` indexes (`varchar_pattern_ops`, `text_pattern_ops`) Django made on TX's
tables before `core.postgresql` stopped making them: nothing queries with `LIKE 'x%'`, and each
was one more index written on every insert (bench/README.md). Django's own tables keep
theirs. Nothing to undo: going back leaves the indexes dropped (a migration made before this
backend would create them again)."""

from django.db import migrations

APPS = [
    "api",
    "events",
    "customers",
    "accounts",
    "cards",
    "monitoring",
    "transactions",
    "transfers",
    "authorizations",
    "webhooks",
]

DROP = """
DO $$
DECLARE
    found record;
BEGIN
    FOR found IN
        SELECT schemaname, indexname FROM pg_indexes
        WHERE schemaname = current_schema()
          AND indexdef ~ '(varchar|text)_pattern_ops'
          AND split_part(tablename, '_', 1) = ANY (%s)
    LOOP
        EXECUTE format('DROP INDEX %%I.%%I', found.schemaname, found.indexname);
    END LOOP;
END
$$;
"""


def drop_like_indexes(apps, schema_editor):
    schema_editor.execute(DROP, [APPS])


class Migration(migrations.Migration):
    dependencies = [
        ("institutions", "0001_initial"),
        ("api", "0006_institutions_moved_out"),
        ("events", "0003_alter_event_institution"),
        ("customers", "0002_alter_customer_institution"),
        ("accounts", "0008_statement_lines_moved_in"),
        ("cards", "0005_alter_card_institution_alter_cardproduct_institution_and_more"),
        ("monitoring", "0002_alter_monitoringalert_institution_and_more"),
        ("transactions", "0007_statement_lines_moved_out"),
        ("transfers", "0003_alter_transfer_created_by_api_key_and_more"),
        ("authorizations", "0002_alter_authorization_created_by_api_key_and_more"),
        ("webhooks", "0002_alter_webhookendpoint_institution"),
    ]

    operations = [migrations.RunPython(drop_like_indexes, migrations.RunPython.noop)]
