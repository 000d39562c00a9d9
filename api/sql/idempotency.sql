-- Claiming an idempotency key (api/idempotency.py `claim`), in one statement the driver can
-- prepare: the wait for a key another request holds is bounded by p_wait (lock_timeout, for
-- this INSERT only), a record older than the replay window is taken over as if it were absent,
-- and a live record of another request gives NULL.
CREATE OR REPLACE FUNCTION tx_idempotency_claim(
    p_wait text, p_institution text, p_key uuid, p_fingerprint text, p_method text,
    p_path text, p_ttl_hours integer
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_lock_timeout text := current_setting('lock_timeout');
    v_id bigint;
BEGIN
    PERFORM set_config('lock_timeout', p_wait, true);
    INSERT INTO api_idempotencyrecord AS r
           (institution_id, key, fingerprint, method, path, created_at)
    VALUES (p_institution, p_key, p_fingerprint, p_method, p_path, now())
    ON CONFLICT (institution_id, key) DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
           status_code = NULL, response_body = NULL, created_at = EXCLUDED.created_at
     WHERE r.created_at < now() - make_interval(hours => p_ttl_hours)
    RETURNING id INTO v_id;
    -- Only the wait for the key is bounded: the operation after it waits as configured.
    PERFORM set_config('lock_timeout', v_lock_timeout, true);
    RETURN v_id;
END
$$;
