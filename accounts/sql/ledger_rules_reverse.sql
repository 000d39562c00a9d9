DROP TRIGGER IF EXISTS accounts_journal_append_only ON accounts_journal;
DROP TRIGGER IF EXISTS accounts_entry_append_only ON accounts_entry;
DROP FUNCTION IF EXISTS tx_reject_ledger_change();
DROP TRIGGER IF EXISTS accounts_entry_currency ON accounts_entry;
DROP FUNCTION IF EXISTS tx_check_entry_currency();
DROP TRIGGER IF EXISTS accounts_entry_journal_balanced ON accounts_entry;
DROP FUNCTION IF EXISTS tx_check_journal_balanced();
