DROP FUNCTION IF EXISTS tx_post(
    text, text, timestamptz, text[], text[], bigint[], bigint[], bigint[], jsonb, jsonb, jsonb, jsonb
);
DROP FUNCTION IF EXISTS tx_refuse(jsonb);
DROP FUNCTION IF EXISTS tx_refuse(text, text, jsonb);
DROP FUNCTION IF EXISTS tx_not_found_refusal();
DROP FUNCTION IF EXISTS tx_currency_refusal(text, text, text);
DROP FUNCTION IF EXISTS tx_debit_refusal(text, text, text, bigint, bigint);
DROP FUNCTION IF EXISTS tx_debit_refusal(text, text, boolean, bigint, bigint);
DROP FUNCTION IF EXISTS tx_funds_count(text, text);
DROP FUNCTION IF EXISTS tx_credit_refusal(text, text);
DROP FUNCTION IF EXISTS tx_range_refusal(text, bigint, bigint, bigint, bigint, bigint);
