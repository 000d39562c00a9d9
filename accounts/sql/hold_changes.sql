-- The steps of each account's pending balance (applied by migration accounts/0023_hold_changes;
-- docs/balances-at-an-instant.md): a row of accounts_holdchange per hold placed (+amount at its
-- created_at) and per hold closed (-amount at its closed_at), with the account's pending
-- balance after it, written by this trigger whatever code writes the hold.
--
-- Holds are inserted by tx_post and closed in the transaction of the tx_post that gives their
-- amount back: both while the account's row is locked, so per account the changes' ids follow
-- that order. The previous change is one lookup of holdchange_account_at_idx (account_id, at,
-- id); as for ledger entries (balance_after.sql), a change is never before the previous one: an
-- instant taken before a wait for the lock is moved up to the previous change's, so `at` never
-- goes back in id order and "the last change at or before T" is the pending balance at T.
CREATE OR REPLACE FUNCTION tx_hold_change(p_account_id text, p_hold_id text, p_at timestamptz,
                                          p_amount bigint) RETURNS void AS $$
DECLARE
    previous record;
BEGIN
    SELECT at, pending_after INTO previous
      FROM accounts_holdchange
     WHERE account_id = p_account_id
     ORDER BY at DESC, id DESC
     LIMIT 1;
    INSERT INTO accounts_holdchange (account_id, hold_id, at, amount, pending_after)
    VALUES (p_account_id, p_hold_id, greatest(p_at, previous.at), p_amount,
            coalesce(previous.pending_after, 0) + p_amount);
END;
$$ LANGUAGE plpgsql;

-- A hold's account, amount and instants are history once written: only its closing (closed_at
-- set once) changes the pending balance. A close is never before the placing (greatest): a hold
-- counts from created_at until closed_at, not before it existed.
CREATE OR REPLACE FUNCTION tx_hold_changed() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM tx_hold_change(NEW.account_id, NEW.id, NEW.created_at, NEW.amount);
        IF NEW.closed_at IS NOT NULL THEN
            PERFORM tx_hold_change(NEW.account_id, NEW.id,
                                   greatest(NEW.closed_at, NEW.created_at), -NEW.amount);
        END IF;
    ELSIF OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL
          AND OLD.account_id = NEW.account_id AND OLD.amount = NEW.amount
          AND OLD.created_at = NEW.created_at THEN
        PERFORM tx_hold_change(NEW.account_id, NEW.id,
                               greatest(NEW.closed_at, NEW.created_at), -NEW.amount);
    ELSIF OLD.account_id <> NEW.account_id OR OLD.amount <> NEW.amount
          OR OLD.created_at <> NEW.created_at OR OLD.closed_at IS DISTINCT FROM NEW.closed_at THEN
        RAISE EXCEPTION 'hold %: its account, amount, created_at and closed_at (once set) do not '
                        'change', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS accounts_hold_changes ON accounts_hold;
CREATE TRIGGER accounts_hold_changes
    AFTER INSERT OR UPDATE OF account_id, amount, created_at, closed_at ON accounts_hold
    FOR EACH ROW EXECUTE FUNCTION tx_hold_changed();
