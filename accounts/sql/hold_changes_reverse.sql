DROP TRIGGER IF EXISTS accounts_hold_changes ON accounts_hold;
DROP FUNCTION IF EXISTS tx_hold_changed();
DROP FUNCTION IF EXISTS tx_hold_change(text, text, timestamptz, bigint);
