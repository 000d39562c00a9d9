-- Interest terms never change once written (docs/interest.md, "Terms"): a change is a new row
-- from a later date, so no past day's calculation is ever rewritten.
CREATE OR REPLACE FUNCTION interest_terms_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'interest terms are never changed or deleted: add terms from a later date'
        USING ERRCODE = 'check_violation';
END;
$$;

DROP TRIGGER IF EXISTS interest_terms_append_only ON interest_interestterms;
CREATE TRIGGER interest_terms_append_only
    BEFORE UPDATE OR DELETE ON interest_interestterms
    FOR EACH ROW EXECUTE FUNCTION interest_terms_append_only();
