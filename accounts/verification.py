"""The ledger's invariants (docs/design.md section 7), checked over the whole database in SQL.

Each check returns the rows that break it; an empty result everywhere means the ledger holds.
An app above `accounts` whose money follows rules of its own adds its checks when Django starts
(`register`, the registration pattern of docs/architecture.md): `authorizations`' just-in-time
funding, for one.
"""

from dataclasses import dataclass

from django.db import connection, transaction

CHECKS = {
    "journals that do not sum to zero per currency": """
        SELECT journal_id, currency, SUM(signed)::bigint AS total
          FROM (SELECT journal_id, currency,
                       CASE direction WHEN 'credit' THEN amount ELSE -amount END AS signed
                  FROM accounts_entry) e
         GROUP BY journal_id, currency
        HAVING SUM(signed) <> 0
    """,
    "accounts whose posted balance is not the sum of their entries": """
        SELECT a.id, a.posted, COALESCE(s.total, 0)::bigint AS entries
          FROM accounts_account a
          LEFT JOIN (SELECT account_id,
                            SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END) AS total
                       FROM accounts_entry GROUP BY account_id) s ON s.account_id = a.id
         WHERE a.posted <> COALESCE(s.total, 0)
    """,
    "entries whose balance_after is not the running sum of their account's entries": """
        SELECT id, account_id, balance_after, running::bigint
          FROM (SELECT id, account_id, balance_after,
                       SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END)
                           OVER (PARTITION BY account_id ORDER BY id ROWS UNBOUNDED PRECEDING)
                           AS running
                  FROM accounts_entry) e
         WHERE balance_after <> running
    """,
    "accounts whose posted balance is not their last entry's balance_after": """
        SELECT a.id, a.posted, COALESCE(last.balance_after, 0) AS balance_after
          FROM accounts_account a
          LEFT JOIN LATERAL (SELECT balance_after FROM accounts_entry
                              WHERE account_id = a.id ORDER BY id DESC LIMIT 1) last ON true
         WHERE a.posted <> COALESCE(last.balance_after, 0)
    """,
    "entries created before their account's previous entry": """
        SELECT id, account_id, created_at, previous
          FROM (SELECT id, account_id, created_at,
                       LAG(created_at) OVER (PARTITION BY account_id ORDER BY id) AS previous
                  FROM accounts_entry) e
         WHERE created_at < previous
    """,
    "hold steps whose pending_after is not the running sum of their account's steps": """
        SELECT id, account_id, pending_after, running::bigint
          FROM (SELECT id, account_id, pending_after,
                       SUM(amount) OVER (PARTITION BY account_id ORDER BY id
                                         ROWS UNBOUNDED PRECEDING) AS running,
                       at < LAG(at) OVER (PARTITION BY account_id ORDER BY id) AS goes_back
                  FROM accounts_holdchange) c
         WHERE pending_after <> running OR goes_back
    """,
    "accounts whose pending balance is not the sum of their active holds": """
        SELECT a.id, a.pending, COALESCE(h.total, 0)::bigint AS holds
          FROM accounts_account a
          LEFT JOIN (SELECT account_id, SUM(amount) AS total
                       FROM accounts_hold WHERE status = 'active' GROUP BY account_id) h
                 ON h.account_id = a.id
         WHERE a.pending <> COALESCE(h.total, 0)
    """,
    "institutions whose balances do not sum to zero per currency": """
        SELECT institution_id, currency, SUM(posted)::bigint AS total
          FROM accounts_account
         GROUP BY institution_id, currency
        HAVING SUM(posted) <> 0
    """,
    # Below zero by what the network forced on it is allowed (docs/card-transactions.md,
    # "Messages the network does not ask"), and no more.
    "customer accounts below zero available": """
        SELECT id, posted, pending, overdraft_limit, network_overdraft
          FROM accounts_account
         WHERE kind = 'customer' AND posted - pending + overdraft_limit + network_overdraft < 0
    """,
    # The network's shortfall is only ever what is still below zero: never room for a debit.
    "customer accounts with a network overdraft they do not owe": """
        SELECT id, posted, pending, overdraft_limit, network_overdraft
          FROM accounts_account
         WHERE kind = 'customer'
           AND network_overdraft > GREATEST(0, pending - posted - overdraft_limit)
    """,
}


def register(name: str, sql: str) -> None:
    """Add a check: `sql` returns the rows that break the rule `name` says."""
    if name in CHECKS and CHECKS[name] != sql:
        raise ValueError(f"Another check is registered as {name!r}.")
    CHECKS[name] = sql


@dataclass(frozen=True)
class Breach:
    check: str
    rows: list[tuple]


def ledger_breaches() -> list[Breach]:
    """Run every check in one REPEATABLE READ snapshot, so they see one consistent ledger
    while transfers go on (inside a caller's transaction, in that transaction)."""
    if connection.in_atomic_block:
        return _run_checks()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _run_checks()


def _run_checks() -> list[Breach]:
    breaches = []
    with connection.cursor() as cursor:
        for name, sql in CHECKS.items():
            cursor.execute(sql)
            rows = cursor.fetchall()
            if rows:
                breaches.append(Breach(check=name, rows=rows))
    return breaches
