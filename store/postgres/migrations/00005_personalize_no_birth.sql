-- Nothing derived from a birth date in the state, PostgreSQL dialect. Keep
-- this file and ../sqlite/00005_personalize_no_birth.sql in step.
--
-- The platform's derived personalization fields hold a "birth" group (year,
-- month, zodiac, age...) computed from the birth date hrsync sends. The state
-- keeps no birth date (DESIGN.md, invariant 5), and nothing derived from one
-- either: this migration clears the group from every stored row, a check
-- refuses a row that holds it (store.SavePersonalization drops it before
-- writing), and the view personalization_report leaves it out. What stays:
-- the sha and status the job needs to never personalize twice, and the
-- name, work and anniversary fields the analysts' view shows.

-- +goose Up
UPDATE personalizations SET fields = fields - 'birth' WHERE fields -> 'birth' IS NOT NULL;
ALTER TABLE personalizations ADD CONSTRAINT personalizations_no_birth CHECK (fields -> 'birth' IS NULL);
COMMENT ON COLUMN personalizations.fields IS 'The derived personalization fields (name, anniversary, work) as the platform returned them, without the birth group: nothing derived from a birth date is kept.';

CREATE OR REPLACE VIEW personalization_report AS
SELECT
    p.tenant,
    p.external_id,
    p.collection_id,
    p.state,
    p.platform_status,
    p.sha,
    p.fields -> 'name' ->> 'initials'           AS initials,
    p.fields -> 'name' ->> 'firstPossessive'    AS first_possessive,
    p.fields -> 'work' ->> 'department'         AS department,
    p.fields -> 'work' ->> 'location'           AS location,
    p.fields -> 'anniversary' ->> 'ordinal'     AS anniversary_ordinal,
    p.fields -> 'anniversary' ->> 'elapsed'     AS anniversary_elapsed,
    p.fields - 'birth'                          AS fields,
    p.attempts,
    p.last_error,
    p.updated_at,
    p.done_at
FROM personalizations p;
COMMENT ON VIEW personalization_report IS 'One row per person and collection with the derived fields flattened; join it to people on (tenant, external_id). Nothing derived from a birth date.';

-- +goose Down
-- The birth group cleared is not brought back.
ALTER TABLE personalizations DROP CONSTRAINT personalizations_no_birth;
COMMENT ON COLUMN personalizations.fields IS 'The derived personalization fields (name, anniversary, birth, work) as the platform returned them.';
CREATE OR REPLACE VIEW personalization_report AS
SELECT
    p.tenant,
    p.external_id,
    p.collection_id,
    p.state,
    p.platform_status,
    p.sha,
    p.fields -> 'name' ->> 'initials'           AS initials,
    p.fields -> 'name' ->> 'firstPossessive'    AS first_possessive,
    p.fields -> 'work' ->> 'department'         AS department,
    p.fields -> 'work' ->> 'location'           AS location,
    p.fields -> 'anniversary' ->> 'ordinal'     AS anniversary_ordinal,
    p.fields -> 'anniversary' ->> 'elapsed'     AS anniversary_elapsed,
    p.fields,
    p.attempts,
    p.last_error,
    p.updated_at,
    p.done_at
FROM personalizations p;
COMMENT ON VIEW personalization_report IS 'One row per person and collection with the derived fields flattened; join it to people on (tenant, external_id).';
