-- The one posting path (applied by migrations accounts/0010_posting_function and
-- 0012_posting_refusals; called only by accounts/posting.py). Every change of an account's
-- balances goes through tx_post: it locks the accounts in id order, checks them, and writes the
-- journal, its entries, the balances, the operation's rows, its statement lines and its events,
-- in one round trip.
--
-- A refusal raises SQLSTATE TX001 with the TX error code as its message, the human message as
-- its hint and the error's details (JSON) as its detail; accounts/posting.py turns it into the
-- TXError of that code. Nothing has been written when it is raised (checks come before writes),
-- and the caller's transaction rolls back anyway.

-- The refusals, spelled once for tx_post and its batch form tx_post_many (posting_many.sql):
-- each is NULL when the account passes, else {code, message, details} (message NULL: the
-- error's own).
CREATE OR REPLACE FUNCTION tx_not_found_refusal() RETURNS jsonb AS $$
    SELECT jsonb_build_object('code', 'not_found',
        'message', 'An account of this operation does not exist.', 'details', NULL);
$$ LANGUAGE sql IMMUTABLE;

-- The request's currency is the account's.
CREATE OR REPLACE FUNCTION tx_currency_refusal(account_id text, account_currency text,
                                               currency text) RETURNS jsonb AS $$
    SELECT CASE WHEN account_currency <> currency THEN jsonb_build_object(
        'code', 'currency_mismatch',
        'message', format('The account is in %s, the request in %s.', account_currency, currency),
        'details', jsonb_build_object('account_id', account_id,
            'account_currency', account_currency, 'currency', currency)) END;
$$ LANGUAGE sql STABLE;

-- Money or a hold leaves the account: it is active and, when its funds count (`funded`: a
-- customer account, or the program's funding account of just-in-time funding, whose credit is its
-- overdraft_limit: tx_funds_count), has `needs` available (0: only the status is checked). The
-- institution's other internal accounts may go below zero.
CREATE OR REPLACE FUNCTION tx_funds_count(kind text, internal_code text) RETURNS boolean AS $$
    SELECT kind = 'customer' OR internal_code = 'program_funding';
$$ LANGUAGE sql IMMUTABLE;

CREATE OR REPLACE FUNCTION tx_debit_refusal(account_id text, status text, funded boolean,
                                            available bigint, needs bigint) RETURNS jsonb AS $$
    SELECT CASE
        WHEN status <> 'active' THEN jsonb_build_object(
            'code', 'account_not_active',
            'message', format('The account is %s: money cannot leave it.', status),
            'details', jsonb_build_object('account_id', account_id, 'status', status))
        WHEN funded AND needs > 0 AND available < needs THEN jsonb_build_object(
            'code', 'insufficient_funds', 'message', NULL,
            'details', jsonb_build_object('account_id', account_id,
                'available', available, 'amount', needs))
    END;
$$ LANGUAGE sql STABLE;

-- Money comes into the account: it is not closed.
CREATE OR REPLACE FUNCTION tx_credit_refusal(account_id text, status text) RETURNS jsonb AS $$
    SELECT CASE WHEN status = 'closed' THEN jsonb_build_object(
        'code', 'account_not_active', 'message', 'The account is closed.',
        'details', jsonb_build_object('account_id', account_id, 'status', status)) END;
$$ LANGUAGE sql IMMUTABLE;

-- The account's balances stay in the range of their bigint columns once `add_posted` and
-- `add_pending` are added: `posted`, `pending` and the generated `available` (posted - pending
-- + overdraft_limit). Past it, writing them would fail with numeric_value_out_of_range (22003)
-- and every later posting to the account would too; refused here, before any write, like the
-- other checks. Every value within +-2^61 cannot overflow (the sums stay within 3 * 2^61): that
-- is all a posting costs (bigint comparisons); beyond, the sums are made in numeric, exactly.
-- STABLE, like the other refusals: PL/pgSQL inlines it into the caller's expression (an
-- IMMUTABLE function calling the STABLE jsonb_build_object would be called, several times
-- slower).
CREATE OR REPLACE FUNCTION tx_range_refusal(account_id text, posted bigint, pending bigint,
                                            available bigint, add_posted bigint,
                                            add_pending bigint) RETURNS jsonb AS $$
    SELECT CASE
        WHEN posted BETWEEN -2305843009213693952 AND 2305843009213693952
         AND pending BETWEEN -2305843009213693952 AND 2305843009213693952
         AND available BETWEEN -2305843009213693952 AND 2305843009213693952
         AND add_posted BETWEEN -2305843009213693952 AND 2305843009213693952
         AND add_pending BETWEEN -2305843009213693952 AND 2305843009213693952 THEN NULL
        WHEN posted::numeric + add_posted NOT BETWEEN -9223372036854775808 AND 9223372036854775807
          OR pending::numeric + add_pending NOT BETWEEN -9223372036854775808 AND 9223372036854775807
          OR available::numeric + add_posted - add_pending
             NOT BETWEEN -9223372036854775808 AND 9223372036854775807
        THEN jsonb_build_object('code', 'balance_out_of_range', 'message', NULL,
            'details', jsonb_build_object('account_id', account_id))
    END;
$$ LANGUAGE sql STABLE;

-- Raise a refusal (when there is one).
CREATE OR REPLACE FUNCTION tx_refuse(refusal jsonb) RETURNS void AS $$
BEGIN
    IF refusal IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'TX001', MESSAGE = refusal->>'code',
            HINT = coalesce(refusal->>'message', ''),
            DETAIL = coalesce((refusal->'details')::text, 'null');
    END IF;
END;
$$ LANGUAGE plpgsql;

-- p_account_ids: the accounts the operation touches, in the order their checks are made (and
-- their refusals reported); each array below has one element per account:
--   p_checks:  'debit'  money or a hold leaves it: active, and p_needs available (a customer
--                       account; 0 = the amount is already held, only the status is checked);
--              'credit' money comes in: not closed;
--              'forced' money or a hold leaves it that the card network already paid (an
--                       advice, a force post): not closed, whatever is available;
--              ''       no check (a held amount given back, the other side of a capture);
--   p_posted:  added to `posted` (credit +, debit -): the legs of p_journal, which must be set
--              when any is not 0 (they sum to zero: the deferred trigger of ledger_rules.sql);
--   p_pending: added to `pending` (a hold placed +, released or captured -).
-- p_rows: [[table, row], ...], the operation's own rows (a transfer, a hold...: the tables
-- listed at their INSERT below), inserted in order; p_lines: statement lines
-- (transactions_transaction rows); p_events: events_event rows.
-- Rows are JSON objects of column values (jsonb_populate_record).
CREATE OR REPLACE FUNCTION tx_post(
    p_institution_id text,
    p_currency text,
    p_now timestamptz,
    p_account_ids text[],
    p_checks text[],
    p_needs bigint[],
    p_posted bigint[],
    p_pending bigint[],
    p_journal jsonb,
    p_rows jsonb,
    p_lines jsonb,
    p_events jsonb
) RETURNS void AS $$
DECLARE
    n int := cardinality(p_account_ids);
    accounts accounts_account[];
    account accounts_account;
    i int;
    item jsonb;
    refusal jsonb;
BEGIN
    IF n IS NULL OR n = 0
       OR cardinality(p_checks) IS DISTINCT FROM n OR cardinality(p_needs) IS DISTINCT FROM n
       OR cardinality(p_posted) IS DISTINCT FROM n OR cardinality(p_pending) IS DISTINCT FROM n
       OR (SELECT count(DISTINCT id) FROM unnest(p_account_ids) AS id) <> n THEN
        RAISE EXCEPTION 'tx_post: each account once, with one check, need, posted and pending';
    END IF;
    -- Locked in id order (the lock order of accounts/locks.py: the sort is below the locking),
    -- and read as locked, in one statement; then put in the caller's order.
    SELECT array_agg(l.a ORDER BY array_position(p_account_ids, (l.a).id)) INTO accounts
      FROM (SELECT a FROM accounts_account a
             WHERE a.id = ANY (p_account_ids) AND a.institution_id = p_institution_id
             ORDER BY a.id FOR UPDATE) AS l;
    IF coalesce(cardinality(accounts), 0) <> n THEN
        PERFORM tx_refuse(tx_not_found_refusal());
    END IF;

    -- tx_refuse is called only with a refusal: a PL/pgSQL call per check is the most of what a
    -- check costs.
    FOREACH account IN ARRAY accounts LOOP
        refusal := tx_currency_refusal(account.id, account.currency, p_currency);
        IF refusal IS NOT NULL THEN
            PERFORM tx_refuse(refusal);
        END IF;
    END LOOP;

    FOR i IN 1 .. n LOOP
        account := accounts[i];
        refusal := NULL;
        -- Money or a hold leaving a customer account always passes the debit check, or is
        -- forced by the card network (its allowance raised first, network_overdraft.sql).
        IF (p_posted[i] < 0 OR p_pending[i] > 0) AND account.kind = 'customer'
           AND p_checks[i] IS DISTINCT FROM 'debit' AND p_checks[i] IS DISTINCT FROM 'forced' THEN
            RAISE EXCEPTION 'tx_post: money leaves account % without the debit check', account.id;
        END IF;
        IF p_checks[i] = 'debit' THEN
            refusal := tx_debit_refusal(account.id, account.status,
                                        tx_funds_count(account.kind, account.internal_code),
                                        account.available, p_needs[i]);
        ELSIF p_checks[i] = 'credit' OR p_checks[i] = 'forced' THEN
            -- 'forced': an advice or a force post, which the network already paid: taken
            -- whatever is available, frozen or not; a closed account takes nothing.
            refusal := tx_credit_refusal(account.id, account.status);
        ELSIF p_checks[i] IS DISTINCT FROM '' THEN
            RAISE EXCEPTION 'tx_post: unknown check %', p_checks[i];
        END IF;
        IF refusal IS NULL THEN
            refusal := tx_range_refusal(account.id, account.posted, account.pending,
                                        account.available, p_posted[i], p_pending[i]);
        END IF;
        IF refusal IS NOT NULL THEN
            PERFORM tx_refuse(refusal);
        END IF;
    END LOOP;

    IF p_journal IS NOT NULL THEN
        INSERT INTO accounts_journal
            SELECT * FROM jsonb_populate_record(NULL::accounts_journal, p_journal);
        -- balance_after: the locked account's posted plus this leg (ledger rule,
        -- balance_after.sql); the accounts are updated below.
        INSERT INTO accounts_entry (journal_id, account_id, direction, amount, currency, created_at,
                                    balance_after)
            SELECT p_journal->>'id', l.id, CASE WHEN l.posted > 0 THEN 'credit' ELSE 'debit' END,
                   abs(l.posted), p_currency, p_now, accounts[l.i].posted + l.posted
              FROM unnest(p_account_ids, p_posted) WITH ORDINALITY AS l(id, posted, i)
             WHERE l.posted <> 0
             ORDER BY l.i;
    ELSIF EXISTS (SELECT 1 FROM unnest(p_posted) AS posted WHERE posted <> 0) THEN
        RAISE EXCEPTION 'tx_post: a change of posted balances needs a journal';
    END IF;

    UPDATE accounts_account a
       SET posted = a.posted + d.posted, pending = a.pending + d.pending, updated_at = p_now
      FROM unnest(p_account_ids, p_posted, p_pending) AS d(id, posted, pending)
     WHERE a.id = d.id AND (d.posted <> 0 OR d.pending <> 0);

    -- One static INSERT per table an operation records itself in: PL/pgSQL keeps its plan,
    -- where a dynamic EXECUTE is parsed and planned at every call (the costliest statement of a
    -- transfer in pg_stat_statements, bench/README.md). A table not listed is refused.
    FOR item IN SELECT value FROM jsonb_array_elements(coalesce(p_rows, '[]')) LOOP
        CASE item->>0
        WHEN 'transfers_transfer' THEN
            INSERT INTO transfers_transfer
                SELECT * FROM jsonb_populate_record(NULL::transfers_transfer, item->1);
        WHEN 'transfers_transferreversal' THEN
            INSERT INTO transfers_transferreversal
                SELECT * FROM jsonb_populate_record(NULL::transfers_transferreversal, item->1);
        WHEN 'accounts_hold' THEN
            INSERT INTO accounts_hold
                SELECT * FROM jsonb_populate_record(NULL::accounts_hold, item->1);
        WHEN 'accounts_adjustment' THEN
            INSERT INTO accounts_adjustment
                SELECT * FROM jsonb_populate_record(NULL::accounts_adjustment, item->1);
        WHEN 'accounts_fee' THEN
            INSERT INTO accounts_fee
                SELECT * FROM jsonb_populate_record(NULL::accounts_fee, item->1);
        WHEN 'authorizations_cardreturn' THEN
            INSERT INTO authorizations_cardreturn
                SELECT * FROM jsonb_populate_record(NULL::authorizations_cardreturn, item->1);
        ELSE
            RAISE EXCEPTION 'tx_post: no operation row of table %', item->>0;
        END CASE;
    END LOOP;
    INSERT INTO transactions_transaction
        SELECT * FROM jsonb_populate_recordset(NULL::transactions_transaction,
                                               coalesce(p_lines, '[]'));
    INSERT INTO events_event
        SELECT * FROM jsonb_populate_recordset(NULL::events_event, coalesce(p_events, '[]'));
END;
$$ LANGUAGE plpgsql;
