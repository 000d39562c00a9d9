-- Each entry stores its account's posted balance right after it (applied by migration
-- accounts/0016_balance_after; docs/balances-at-an-instant.md). The posting functions write
-- it (posting.sql, posting_many.sql); this rule refuses any other value, whatever code writes.
--
-- An account's entries are ordered by id: ids are taken while the posting function holds the
-- account's row lock, so per account they follow posting order. The rule, one indexed lookup
-- of the account's previous entry (index entry_account_idx, account_id, id):
--   balance_after = previous entry's balance_after (0 when none) + signed amount
--                   (credit +, debit -), else check_violation;
--   created_at    = at least the previous entry's created_at: a posting that waited on the
--                   lock may carry a start time earlier than the entry it waited for; its
--                   entry is moved to that entry's instant, so created_at never goes back
--                   in id order and "the last entry at or before T" is exact.
CREATE OR REPLACE FUNCTION tx_check_entry_balance_after() RETURNS trigger AS $$
DECLARE
    previous record;
    expected bigint;
BEGIN
    SELECT balance_after, created_at INTO previous
      FROM accounts_entry
     WHERE account_id = NEW.account_id
     ORDER BY id DESC
     LIMIT 1;
    expected := coalesce(previous.balance_after, 0)
                + CASE NEW.direction WHEN 'credit' THEN NEW.amount ELSE -NEW.amount END;
    IF NEW.balance_after IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'entry on account % has balance_after %, expected %',
            NEW.account_id, NEW.balance_after, expected
            USING ERRCODE = 'check_violation';
    END IF;
    IF previous.created_at > NEW.created_at THEN
        NEW.created_at := previous.created_at;
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS accounts_entry_balance_after ON accounts_entry;
CREATE TRIGGER accounts_entry_balance_after
    BEFORE INSERT ON accounts_entry
    FOR EACH ROW EXECUTE FUNCTION tx_check_entry_balance_after();
