-- tx_post_many: many two-account movements in one call, applied in order (a transfer batch;
-- applied by migration accounts/0011_posting_many, its refusals shared with tx_post since
-- accounts/0012_posting_refusals; called only by accounts/posting.py).
--
-- The batch form of tx_post (posting.sql) for the movements that have exactly two legs, money
-- out of `source` and into `destination`: the same locks (every account of the call, in id
-- order, once), the same checks in the same order with the same refusals (institution,
-- currency of source then destination, source active with the funds and its balances in range,
-- destination not closed and its balances in range),
-- checked item after item on running balances, so an item may spend what an earlier item
-- credited. Then every passing item is written with set-based statements: journals, entries,
-- balances (one UPDATE per account), the items' own rows (p_table), statement lines and events.
--
-- p_atomic: the first refused item ends the call with nothing written; otherwise refused items
-- are skipped. Returns the refusals, [{index (0-based), code, message, details}], in order.
-- Arrays and JSON arrays have one element per item; p_lines holds an array of lines per item.
CREATE OR REPLACE FUNCTION tx_post_many(
    p_institution_id text,
    p_now timestamptz,
    p_atomic boolean,
    p_sources text[],
    p_destinations text[],
    p_amounts bigint[],
    p_currencies text[],
    p_journals jsonb,
    p_table text,
    p_rows jsonb,
    p_lines jsonb,
    p_events jsonb
) RETURNS jsonb AS $$
DECLARE
    n int := cardinality(p_sources);
    ids text[];
    statuses text[];
    funded boolean[];
    currencies text[];
    funds bigint[];
    posteds bigint[];
    delta bigint[];
    touched boolean[];
    passed boolean[];
    refusal jsonb;
    refusals jsonb := '[]';
    s int;
    d int;
    i int;
BEGIN
    IF n IS NULL OR n = 0
       OR cardinality(p_destinations) IS DISTINCT FROM n
       OR cardinality(p_amounts) IS DISTINCT FROM n
       OR cardinality(p_currencies) IS DISTINCT FROM n
       OR jsonb_array_length(p_journals) <> n OR jsonb_array_length(p_rows) <> n
       OR jsonb_array_length(p_lines) <> n OR jsonb_array_length(p_events) <> n
       OR EXISTS (SELECT 1 FROM unnest(p_amounts) AS amount WHERE amount IS NULL OR amount <= 0)
       OR EXISTS (SELECT 1 FROM unnest(p_sources, p_destinations) AS m(s, d)
                   WHERE m.s IS NULL OR m.d IS NULL OR m.s = m.d) THEN
        RAISE EXCEPTION 'tx_post_many: one source, destination, amount, currency, journal, row, '
                        'lines and event per item; positive amounts between two accounts';
    END IF;

    -- Locked in id order (the lock order of accounts/locks.py), once for every item.
    PERFORM 1 FROM accounts_account
      WHERE id = ANY (p_sources || p_destinations) AND institution_id = p_institution_id
      ORDER BY id FOR UPDATE;
    SELECT array_agg(id ORDER BY id), array_agg(status ORDER BY id),
           array_agg(tx_funds_count(kind, internal_code) ORDER BY id),
           array_agg(currency ORDER BY id), array_agg(available ORDER BY id),
           array_agg(posted ORDER BY id)
      INTO ids, statuses, funded, currencies, funds, posteds
      FROM accounts_account
     WHERE id = ANY (p_sources || p_destinations) AND institution_id = p_institution_id;
    ids := coalesce(ids, '{}');
    delta := array_fill(0::bigint, ARRAY[greatest(cardinality(ids), 1)]);
    touched := array_fill(false, ARRAY[greatest(cardinality(ids), 1)]);
    passed := array_fill(false, ARRAY[n]);

    FOR i IN 1 .. n LOOP
        s := array_position(ids, p_sources[i]);
        d := array_position(ids, p_destinations[i]);
        -- tx_post's checks in its order (posting.sql): COALESCE stops at the first refusal.
        refusal := CASE
            WHEN s IS NULL OR d IS NULL THEN tx_not_found_refusal()
            ELSE coalesce(
                tx_currency_refusal(ids[s], currencies[s], p_currencies[i]),
                tx_currency_refusal(ids[d], currencies[d], p_currencies[i]),
                tx_debit_refusal(ids[s], statuses[s], funded[s], funds[s], p_amounts[i]),
                tx_range_refusal(ids[s], posteds[s] + delta[s], 0, funds[s], -p_amounts[i], 0),
                tx_credit_refusal(ids[d], statuses[d]),
                tx_range_refusal(ids[d], posteds[d] + delta[d], 0, funds[d], p_amounts[i], 0))
        END;
        IF refusal IS NOT NULL THEN
            refusal := refusal || jsonb_build_object('index', i - 1);
            IF p_atomic THEN
                RETURN jsonb_build_array(refusal);
            END IF;
            refusals := refusals || jsonb_build_array(refusal);
            CONTINUE;
        END IF;
        funds[s] := funds[s] - p_amounts[i];
        funds[d] := funds[d] + p_amounts[i];
        delta[s] := delta[s] - p_amounts[i];
        delta[d] := delta[d] + p_amounts[i];
        touched[s] := true;
        touched[d] := true;
        passed[i] := true;
    END LOOP;

    -- Each row is read once, in FROM: `(jsonb_populate_record(...)).*` in the select list would
    -- call the function again for every column of the table.
    INSERT INTO accounts_journal
        SELECT r.*
          FROM jsonb_array_elements(p_journals) WITH ORDINALITY AS x(j, i),
               jsonb_populate_record(NULL::accounts_journal, x.j) AS r
         WHERE passed[x.i];
    -- balance_after: the account's posted when locked plus its legs so far, in item order
    -- (an account may appear in several items; ledger rule, balance_after.sql). created_at: the
    -- item's journal's instant, as tx_post stamps a transfer posted alone (the ledger rule moves
    -- it to a later entry's instant, should one exist).
    INSERT INTO accounts_entry (journal_id, account_id, direction, amount, currency, created_at,
                                balance_after)
        SELECT legs.journal_id, legs.account_id, legs.direction, legs.amount, legs.currency,
               legs.created_at,
               posteds[array_position(ids, legs.account_id)]
                 + sum(legs.signed) OVER (PARTITION BY legs.account_id ORDER BY legs.i, legs.k
                                          ROWS UNBOUNDED PRECEDING)
          FROM (SELECT p_journals->(m.i - 1)->>'id' AS journal_id,
                       (p_journals->(m.i - 1)->>'created_at')::timestamptz AS created_at,
                       CASE leg.k WHEN 1 THEN p_sources[m.i] ELSE p_destinations[m.i] END
                         AS account_id,
                       CASE leg.k WHEN 1 THEN 'debit' ELSE 'credit' END AS direction,
                       p_amounts[m.i] AS amount, p_currencies[m.i] AS currency,
                       CASE leg.k WHEN 1 THEN -p_amounts[m.i] ELSE p_amounts[m.i] END AS signed,
                       m.i, leg.k
                  FROM generate_series(1, n) AS m(i), (VALUES (1), (2)) AS leg(k)
                 WHERE passed[m.i]) legs
         ORDER BY legs.i, legs.k;
    UPDATE accounts_account a
       SET posted = a.posted + t.delta, updated_at = p_now
      FROM unnest(ids, delta[1:cardinality(ids)], touched[1:cardinality(ids)])
           AS t(id, delta, touched)
     WHERE a.id = t.id AND t.touched;
    EXECUTE format(
        'INSERT INTO %1$I SELECT r.* FROM jsonb_array_elements($1) WITH ORDINALITY AS x(j, i), '
        'jsonb_populate_record(NULL::%1$I, x.j) AS r WHERE ($2)[x.i]', p_table)
      USING p_rows, passed;
    INSERT INTO transactions_transaction
        SELECT r.*
          FROM jsonb_array_elements(p_lines) WITH ORDINALITY AS x(lines, i),
               jsonb_array_elements(x.lines) AS l(line),
               jsonb_populate_record(NULL::transactions_transaction, l.line) AS r
         WHERE passed[x.i];
    INSERT INTO events_event
        SELECT r.*
          FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(e, i),
               jsonb_populate_record(NULL::events_event, x.e) AS r
         WHERE passed[x.i];
    RETURN refusals;
END;
$$ LANGUAGE plpgsql;
