-- What the card network forced on a customer account and is not yet paid back (applied by
-- migration accounts/0028_network_overdraft; docs/card-transactions.md, "Messages the network
-- does not ask"). An advice or a force post is never declined: accounts/posting.py raises the
-- account's `network_overdraft` to what the posting takes it below zero available, in its own
-- UPDATE before tx_post, and the CHECK account_available_nonneg allows that much. Every later
-- change of the balances (a credit, a hold released, an overdraft limit raised) lowers it to
-- what is still below zero, here, whatever code writes the row: it is never room for another
-- debit, only the shortfall that is owed.
--
-- It fires only on accounts that have one (the WHEN clause, checked without a function call):
-- every other posting costs nothing more.
CREATE OR REPLACE FUNCTION tx_network_overdraft_repaid() RETURNS trigger AS $$
BEGIN
    NEW.network_overdraft := least(NEW.network_overdraft,
                                   greatest(0, NEW.pending - NEW.posted - NEW.overdraft_limit));
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS accounts_network_overdraft_repaid ON accounts_account;
CREATE TRIGGER accounts_network_overdraft_repaid
    BEFORE UPDATE OF posted, pending, overdraft_limit ON accounts_account
    FOR EACH ROW WHEN (NEW.network_overdraft > 0)
    EXECUTE FUNCTION tx_network_overdraft_repaid();
