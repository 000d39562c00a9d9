-- The ledger's rules, enforced by PostgreSQL whatever code writes (applied by migration
-- accounts/0003_ledger_rules). CHECK constraints (positive amounts, available >= 0 for customer
-- accounts) live on the models; what a CHECK cannot express is here.

-- 1. The entries of a journal sum to zero per currency, checked when the transaction commits
--    (a deferred constraint trigger: the legs are inserted one by one).
--    Migration accounts/0021 makes the function keep one plan (plan_cache_mode).
CREATE OR REPLACE FUNCTION tx_check_journal_balanced() RETURNS trigger AS $$
DECLARE
    unbalanced record;
BEGIN
    SELECT currency, SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END) AS total
      INTO unbalanced
      FROM accounts_entry
     WHERE journal_id = NEW.journal_id
     GROUP BY currency
    HAVING SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END) <> 0
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'journal % does not balance in %: its entries sum to %',
            NEW.journal_id, unbalanced.currency, unbalanced.total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER accounts_entry_journal_balanced
    AFTER INSERT ON accounts_entry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION tx_check_journal_balanced();

-- 2. An entry is in its account's currency.
CREATE OR REPLACE FUNCTION tx_check_entry_currency() RETURNS trigger AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM accounts_account WHERE id = NEW.account_id AND currency = NEW.currency
    ) THEN
        RAISE EXCEPTION 'entry in % on account % of another currency',
            NEW.currency, NEW.account_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER accounts_entry_currency
    BEFORE INSERT ON accounts_entry
    FOR EACH ROW EXECUTE FUNCTION tx_check_entry_currency();

-- 3. Journals and entries are append-only: corrections are new journals (reversals).
--    (TRUNCATE is not a row operation; production roles must not own these tables.)
CREATE OR REPLACE FUNCTION tx_reject_ledger_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER accounts_entry_append_only
    BEFORE UPDATE OR DELETE ON accounts_entry
    FOR EACH ROW EXECUTE FUNCTION tx_reject_ledger_change();

CREATE TRIGGER accounts_journal_append_only
    BEFORE UPDATE OR DELETE ON accounts_journal
    FOR EACH ROW EXECUTE FUNCTION tx_reject_ledger_change();
