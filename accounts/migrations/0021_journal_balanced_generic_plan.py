"""The deferred check that a journal balances (tx_check_journal_balanced, ledger_rules.sql)
keeps one plan. Its query (the journal's entries, by the journal's index) was planned again at
1,705 of its 4,440 calls in a run of bench/inprocess.py (pg_stat_statements with
track_planning): PostgreSQL's plan cache kept choosing a custom plan, 35 us of planning for a
5 us query, twice per transfer, at COMMIT. The plan does not depend on the journal, so the
function runs with plan_cache_mode = force_generic_plan (3 plans in 6,440 calls)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0020_posting_static_rows")]

    operations = [
        migrations.RunSQL(
            sql="ALTER FUNCTION tx_check_journal_balanced() SET plan_cache_mode = force_generic_plan",
            reverse_sql="ALTER FUNCTION tx_check_journal_balanced() RESET plan_cache_mode",
        )
    ]
