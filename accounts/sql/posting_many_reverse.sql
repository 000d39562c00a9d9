DROP FUNCTION IF EXISTS tx_post_many(
    text, timestamptz, boolean, text[], text[], bigint[], text[], jsonb, text, jsonb, jsonb, jsonb
);
