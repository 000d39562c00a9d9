DROP FUNCTION IF EXISTS tx_post(
    text, text, timestamptz, text[], text[], bigint[], bigint[], bigint[], jsonb, jsonb, jsonb, jsonb
);
DROP FUNCTION IF EXISTS tx_refuse(text, text, jsonb);
