DROP TRIGGER IF EXISTS accounts_entry_balance_after ON accounts_entry;
DROP FUNCTION IF EXISTS tx_check_entry_balance_after();
