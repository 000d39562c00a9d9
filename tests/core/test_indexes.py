"""What the database indexes, and that nothing else is written on every insert.

`core.postgresql` makes no `_like` index (`varchar_pattern_ops`) and
core/migrations/0001_no_like_indexes.py dropped the old ones; the tables every transfer writes
(statement lines, entries, transfers, events) keep exactly the indexes their reads use
(bench/README.md): a foreign key that leads a composite index has no index of its own.
"""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import Entry, Hold, StatementLine
from api.models import IdempotencyRecord
from authorizations.models import Authorization
from backoffice.models import StaffActivity
from events.models import Event
from monitoring.models import MonitoringAlert
from tests.accounts.api.helpers import created, funded_account, open_account, transfer
from transfers.models import Transfer, TransferBatch, TransferReversal

pytestmark = pytest.mark.django_db

OUR_APPS = {
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
}


def indexes(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = current_schema() AND tablename = %s",
            [table],
        )
        return dict(cursor.fetchall())


def test_no_pattern_ops_index_on_our_tables():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexdef ~ '(varchar|text)_pattern_ops'"
        )
        found = [row for row in cursor.fetchall() if row[0].split("_")[0] in OUR_APPS]
    assert found == []


def test_the_statement_line_table_keeps_only_the_indexes_its_reads_use():
    assert sorted(indexes(StatementLine._meta.db_table)) == [
        "transactions_transaction_pkey",
        "txn_account_idx",
        "txn_account_status_idx",
        "txn_account_type_idx",
        "txn_adjustment_idx",
        "txn_authorization_idx",
        "txn_card_idx",
        "txn_card_return_idx",
        # partial: only a dispute's lines (the admin's lines of a dispute, docs/disputes.md)
        "txn_dispute_idx",
        "txn_fee_idx",  # partial: only fee lines (the admin's lines of a fee, docs/fees.md)
        "txn_hold_idx",
        "txn_journal_idx",
        "txn_transfer_idx",
    ]


@pytest.mark.parametrize(
    ("lookup", "index"),
    [
        ({"account_id": "acc_x"}, "txn_account_"),  # any of the three per-account indexes
        ({"hold_id": "hld_x"}, "txn_hold_idx"),
        ({"transfer_id": "trf_x"}, "txn_transfer_idx"),
        ({"journal_id": "jnl_x"}, "txn_journal_idx"),
        ({"card_return_id": "ret_x"}, "txn_card_return_idx"),
        ({"adjustment_id": "adj_x"}, "txn_adjustment_idx"),
        ({"authorization_id": "aut_x"}, "txn_authorization_idx"),
        ({"fee_id": "fee_x"}, "txn_fee_idx"),
        ({"dispute_id": "dsp_x"}, "txn_dispute_idx"),
    ],
)
def test_every_lookup_of_statement_lines_has_its_index(lookup, index):
    query = StatementLine.objects.filter(**lookup).order_by().values("pk")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
    assert index in plan, plan


def test_the_audit_page_reads_the_staffs_events_by_their_index():
    """Its list, newest first: the partial index, not every event walked backwards."""
    query = StaffActivity.objects.order_by("-id").values("pk")[:100]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
    assert "event_staff_idx" in plan, plan


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            Entry,
            [
                "accounts_entry_journal_id_5f0eaa4f",
                "accounts_entry_pkey",
                "entry_account_at_idx",
                "entry_account_idx",
            ],
        ),
        (
            Transfer,
            [
                # partial: only the transfers a staff user made (transfers/migrations/0009)
                "transfer_created_by_user_idx",
                "transfer_destination_idx",
                # partial and unique: only two-phase transfers have a hold
                "transfer_hold_unique",
                "transfer_institution_idx",
                "transfer_reference_unique",  # partial: only transfers with a reference
                "transfer_source_idx",
                # No index of its API key: keys are never deleted (transfers/migrations/0011)
                "transfers_transfer_journal_id_key",
                "transfers_transfer_pkey",
            ],
        ),
        (
            Event,
            [
                "event_actor_idx",
                "event_institution_idx",
                "event_object_idx",
                # partial: only the staff's events (the audit page; events/migrations/0005)
                "event_staff_idx",
                "event_type_idx",
                "events_event_pkey",
            ],
        ),
        (
            IdempotencyRecord,
            # No `institution_id` index: the unique (institution_id, key) begins with it
            # (api/migrations/0011).
            [
                "api_idempotencyrecord_pkey",
                "idempotency_created_idx",
                "idempotency_key_unique",
            ],
        ),
    ],
)
def test_the_tables_a_transfer_writes_keep_only_the_indexes_their_reads_use(model, expected):
    assert sorted(indexes(model._meta.db_table)) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            TransferBatch,
            [
                "batch_created_by_user_idx",  # partial
                # its institution's own index is gone: this one starts with it (0010)
                "batch_institution_idx",
                "transfers_transferbatch_pkey",
            ],
        ),
        (
            TransferReversal,
            [
                "reversal_created_by_user_idx",  # partial
                "transfers_transferreversal_journal_id_key",
                "transfers_transferreversal_pkey",
                "transfers_transferreversal_transfer_id_1e880631",
            ],
        ),
    ],
)
def test_the_batches_and_reversals_indexes(model, expected):
    assert sorted(indexes(model._meta.db_table)) == expected


def test_a_hold_keeps_only_the_indexes_its_reads_use():
    """accounts/migrations/0033: no index of the account's or the institution's own (the
    composite ones start with them), the staff user's partial."""
    assert sorted(indexes(Hold._meta.db_table)) == [
        "accounts_hold_capture_journal_id_key",
        "accounts_hold_pkey",
        "accounts_hold_placed_by_api_key_id_beea2275",
        "hold_account_idx",
        "hold_active_expiry_idx",
        "hold_card_auth_status_idx",
        "hold_institution_idx",
        "hold_placed_by_user_idx",  # partial
    ]


@pytest.mark.parametrize(
    ("table", "index", "definition"),
    [
        (
            "transfers_transfer",
            "transfer_created_by_user_idx",
            "INDEX {} ON {}.transfers_transfer USING btree (created_by_user_id)"
            " WHERE (created_by_user_id IS NOT NULL)",
        ),
        (
            "transfers_transfer",
            "transfer_hold_unique",
            "UNIQUE INDEX {} ON {}.transfers_transfer USING btree (hold_id)"
            " WHERE (hold_id IS NOT NULL)",
        ),
        (
            "transfers_transferbatch",
            "batch_created_by_user_idx",
            "INDEX {} ON {}.transfers_transferbatch USING btree (created_by_user_id)"
            " WHERE (created_by_user_id IS NOT NULL)",
        ),
        (
            "transfers_transferreversal",
            "reversal_created_by_user_idx",
            "INDEX {} ON {}.transfers_transferreversal USING btree (created_by_user_id)"
            " WHERE (created_by_user_id IS NOT NULL)",
        ),
        (
            "accounts_hold",
            "hold_placed_by_user_idx",
            "INDEX {} ON {}.accounts_hold USING btree (placed_by_user_id)"
            " WHERE (placed_by_user_id IS NOT NULL)",
        ),
    ],
)
def test_a_column_null_on_nearly_every_row_is_indexed_only_where_set(table, index, definition):
    """transfers/migrations/0009: the API's rows have no staff user and a transfer posted at once
    no hold; a full index took an entry for each of those nulls."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = cursor.fetchone()[0]
    assert indexes(table)[index] == "CREATE " + definition.format(index, schema)


@pytest.mark.parametrize(
    ("model", "lookup", "index"),
    [
        (Entry, {"account_id": "acc_x"}, "entry_account_"),
        (Transfer, {"institution_id": "fi_x"}, "transfer_"),  # its own index or the reference's
        (Transfer, {"source_account_id": "acc_x"}, "transfer_source_idx"),
        (Transfer, {"destination_account_id": "acc_x"}, "transfer_destination_idx"),
        (Event, {"institution_id": "fi_x"}, "event_"),  # any of the three per-institution ones
        (IdempotencyRecord, {"institution_id": "fi_x"}, "idempotency_key_unique"),
        # Partial indexes (an equality implies IS NOT NULL); `__in` is the lookup of a deleted
        # user's or hold's rows that on_delete=PROTECT makes.
        (Transfer, {"created_by_user_id": 1}, "transfer_created_by_user_idx"),
        (Transfer, {"created_by_user__in": [1, 2]}, "transfer_created_by_user_idx"),
        (Transfer, {"hold_id": "hld_x"}, "transfer_hold_unique"),
        (Transfer, {"hold__in": ["hld_x", "hld_y"]}, "transfer_hold_unique"),
        (TransferBatch, {"created_by_user_id": 1}, "batch_created_by_user_idx"),
        (TransferBatch, {"created_by_user__in": [1, 2]}, "batch_created_by_user_idx"),
        (TransferBatch, {"institution_id": "fi_x"}, "batch_institution_idx"),
        (TransferBatch, {"institution__in": ["fi_x", "fi_y"]}, "batch_institution_idx"),
        (TransferReversal, {"created_by_user_id": 1}, "reversal_created_by_user_idx"),
        (TransferReversal, {"created_by_user__in": [1, 2]}, "reversal_created_by_user_idx"),
        (Hold, {"placed_by_user_id": 1}, "hold_placed_by_user_idx"),
        (Hold, {"placed_by_user__in": [1, 2]}, "hold_placed_by_user_idx"),
        (Hold, {"account_id": "acc_x"}, "hold_account_idx"),
        (Hold, {"account__in": ["acc_x", "acc_y"]}, "hold_account_idx"),
        (Hold, {"institution_id": "fi_x"}, "hold_"),  # its own index or the card status one
        (Hold, {"institution__in": ["fi_x", "fi_y"]}, "hold_"),
    ],
)
def test_a_foreign_key_without_its_own_index_is_still_looked_up_by_one(model, lookup, index):
    query = model.objects.filter(**lookup).order_by().values("pk")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
    assert index in plan, plan


@pytest.mark.parametrize(
    ("table", "column", "index"),
    [
        ("transfers_transfer", "created_by_user_id", "transfer_created_by_user_idx"),
        ("transfers_transfer", "hold_id", "transfer_hold_unique"),
        ("transfers_transferbatch", "created_by_user_id", "batch_created_by_user_idx"),
        ("transfers_transferreversal", "created_by_user_id", "reversal_created_by_user_idx"),
        ("accounts_hold", "placed_by_user_id", "hold_placed_by_user_idx"),
        ("accounts_hold", "account_id", "hold_account_idx"),
        ("accounts_hold", "institution_id", "hold_institution_idx"),
        ("transfers_transferbatch", "institution_id", "batch_institution_idx"),
    ],
)
def test_the_foreign_keys_own_check_on_a_delete_reads_the_partial_index(table, column, index):
    """Deleting a user or a hold, PostgreSQL looks for the rows that still refer to it with this
    query (ri_triggers.c, `ri_restrict`), planned once for any value: the generic plan must still
    prove the partial index's predicate."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN (GENERIC_PLAN) SELECT 1 FROM ONLY"  # noqa: S608 (names from the test itself)
            f" {table} x WHERE $1 OPERATOR(pg_catalog.=) {column} FOR KEY SHARE OF x"
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index in plan, plan


def index_entries(table: str) -> int:
    """The entries of all of `table`'s indexes: one per live row for each index whose predicate
    holds for it (a partial index skips the rest)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indrelid = %s::regclass",
            [table],
        )
        predicates = [predicate or "true" for (predicate,) in cursor.fetchall()]
        total = 0
        for predicate in predicates:
            cursor.execute(f"SELECT count(*) FROM {table} WHERE {predicate}")  # noqa: S608
            total += cursor.fetchone()[0]
    return total


# What one transfer posted at once through the API inserts, by table: its rows' index entries
# (docs/money.md, "What one transfer writes, row by row"). Updates here are HOT and take none.
ENTRIES_PER_TRANSFER = {
    "transfers_transfer": 5,  # pkey, institution, source, destination, journal
    "transactions_transaction": 12,  # two lines: pkey, three per account, journal, transfer
    "accounts_entry": 8,  # two legs: pkey, journal, two per account
    "accounts_journal": 2,  # pkey, institution
    "events_event": 5,  # pkey, institution, actor, type, object
    "api_idempotencyrecord": 3,  # pkey, (institution, key), created_at
}


def test_a_transfer_through_the_api_takes_35_index_entries(api_v2):
    source = funded_account(api_v2, 10_000)["accountId"]
    destination = open_account(api_v2)["accountId"]
    before = {table: index_entries(table) for table in ENTRIES_PER_TRANSFER}
    created(transfer(api_v2, source, destination, 100), "v2")
    after = {table: index_entries(table) for table in ENTRIES_PER_TRANSFER}
    assert {table: after[table] - before[table] for table in before} == ENTRIES_PER_TRANSFER
    assert sum(ENTRIES_PER_TRANSFER.values()) == 35


def test_one_transfer_per_hold_still(api_v2):
    source = funded_account(api_v2, 10_000)["accountId"]
    destination = open_account(api_v2)["accountId"]
    expires = (timezone.now() + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    pending = created(transfer(api_v2, source, destination, 100, hold={"expiresAt": expires}), "v2")
    with pytest.raises(IntegrityError, match="transfer_hold_unique"), transaction.atomic():
        _clone("transfers_transfer", pending["transferId"], 1, "jsonb_build_object('id', 'tr_2')")
    assert Transfer.objects.filter(hold__isnull=False).count() == 1


def _plan(query) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        return query.explain()


@pytest.mark.parametrize(
    ("query", "index"),
    [
        # GET /monitoring-alerts?ruleId=: one rule's alerts, newest first, without a sort.
        (
            lambda: MonitoringAlert.objects.filter(rule_id="rul_x").order_by("-id").values("pk"),
            "monitoring_alert_rule_idx",
        ),
        # GET /card-authorizations?status=declined, newest first, without a sort.
        (
            lambda: (
                Authorization.objects.filter(institution_id="fi_x", decision="declined")
                .order_by("-id")
                .values("pk")
            ),
            "authorization_declined_idx",
        ),
        # ?status=pending | presented | reversed | expired: the status is the hold's.
        (
            lambda: (
                Hold.objects.filter(
                    institution_id="fi_x", purpose="card_authorization", status="expired"
                )
                .order_by()
                .values("pk")
            ),
            "hold_card_auth_status_idx",
        ),
    ],
    ids=["alerts by rule", "declined authorizations", "authorizations by hold status"],
)
def test_the_sparse_list_filters_have_their_index(query, index):
    plan = _plan(query())
    assert index in plan, plan
    assert "Sort" not in plan, plan


def _clone(table: str, source_id: str, count: int, changes: str) -> None:
    """`count` copies of one row of `table`, each with the fields `changes` (a jsonb expression of
    `g`, the copy's number) replaced."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} SELECT (jsonb_populate_record(NULL::{table},"  # noqa: S608
            f" to_jsonb(t) || {changes})).* FROM {table} t, generate_series(1, %s) g"
            " WHERE t.id = %s",
            [count, source_id],
        )


def test_the_status_filter_of_authorizations_reads_the_holds_index(api_v2):
    """The list's own query, as the selector builds it, finds a rare status (one expired among
    3,000 presented) through the holds' index; before issue 29 it walked the institution's every
    authorization, newest first, looking for one."""
    from authorizations.selectors import authorization_list
    from tests.authorizations.helpers import approved, funded

    f = funded(api_v2)
    authorization = Authorization.objects.get(
        pk=approved(api_v2, f.card_id, 100)["authorizationId"]
    )
    hold = "'hold_' || lpad(g::text, 26, '0')"
    _clone(
        "accounts_hold",
        authorization.hold_id,
        3000,
        f"jsonb_build_object('id', {hold}, 'status', 'captured', 'amount', 1)",
    )
    _clone(
        "authorizations_authorization",
        authorization.pk,
        3000,
        f"jsonb_build_object('id', 'auz_' || lpad(g::text, 26, '0'), 'hold_id', {hold})",
    )
    Hold.objects.filter(pk=authorization.hold_id).update(status="expired")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE accounts_hold")
        cursor.execute("ANALYZE authorizations_authorization")
    listed = authorization_list(institution=authorization.institution, status="expired")
    plan = listed.values("pk")[:21].explain()
    assert "hold_card_auth_status_idx" in plan, plan
    assert [a.pk for a in listed[:21]] == [authorization.pk]
