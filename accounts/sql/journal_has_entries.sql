-- A journal is a money movement: one without entries is refused when the transaction commits
-- (deferred, because the journal row is written before its entries).
CREATE OR REPLACE FUNCTION tx_check_journal_has_entries() RETURNS trigger AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM accounts_entry WHERE journal_id = NEW.id) THEN
        RAISE EXCEPTION 'journal % has no entries', NEW.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER accounts_journal_has_entries
    AFTER INSERT ON accounts_journal
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION tx_check_journal_has_entries();
