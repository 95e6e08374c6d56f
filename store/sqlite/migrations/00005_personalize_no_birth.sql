-- Nothing derived from a birth date in the state, SQLite dialect. Keep this
-- file and ../postgres/00005_personalize_no_birth.sql in step.
--
-- The platform's derived personalization fields hold a "birth" group (year,
-- month, zodiac, age...) computed from the birth date hrsync sends. The state
-- keeps no birth date (DESIGN.md, invariant 5), and nothing derived from one
-- either: this migration clears the group from every stored row, triggers
-- refuse a row that holds it (store.SavePersonalization drops it before
-- writing), and the view personalization_report leaves it out. What stays:
-- the sha and status the job needs to never personalize twice, and the
-- name, work and anniversary fields the analysts' view shows.

-- +goose Up
UPDATE personalizations SET fields = json_remove(fields, '$.birth')
WHERE json_type(fields, '$.birth') IS NOT NULL;

-- +goose StatementBegin
CREATE TRIGGER personalizations_no_birth_insert BEFORE INSERT ON personalizations
WHEN json_type(NEW.fields, '$.birth') IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'personalizations.fields: the birth group is derived from a birth date and never stored');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER personalizations_no_birth_update BEFORE UPDATE OF fields ON personalizations
WHEN json_type(NEW.fields, '$.birth') IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'personalizations.fields: the birth group is derived from a birth date and never stored');
END;
-- +goose StatementEnd

-- personalization_report: one row per person and collection with the
-- derived fields flattened; join it to people on (tenant, external_id).
-- fields never holds the birth group.
DROP VIEW personalization_report;
CREATE VIEW personalization_report AS
SELECT
    p.tenant,
    p.external_id,
    p.collection_id,
    p.state,
    p.platform_status,
    p.sha,
    json_extract(p.fields, '$.name.initials')          AS initials,
    json_extract(p.fields, '$.name.firstPossessive')   AS first_possessive,
    json_extract(p.fields, '$.work.department')        AS department,
    json_extract(p.fields, '$.work.location')          AS location,
    json_extract(p.fields, '$.anniversary.ordinal')    AS anniversary_ordinal,
    json_extract(p.fields, '$.anniversary.elapsed')    AS anniversary_elapsed,
    json_remove(p.fields, '$.birth')                   AS fields,
    p.attempts,
    p.last_error,
    p.updated_at,
    p.done_at
FROM personalizations p;

-- +goose Down
-- The birth group cleared is not brought back (the next personalization of a
-- changed person would store it again).
DROP TRIGGER personalizations_no_birth_insert;
DROP TRIGGER personalizations_no_birth_update;
DROP VIEW personalization_report;
CREATE VIEW personalization_report AS
SELECT
    p.tenant,
    p.external_id,
    p.collection_id,
    p.state,
    p.platform_status,
    p.sha,
    json_extract(p.fields, '$.name.initials')          AS initials,
    json_extract(p.fields, '$.name.firstPossessive')   AS first_possessive,
    json_extract(p.fields, '$.work.department')        AS department,
    json_extract(p.fields, '$.work.location')          AS location,
    json_extract(p.fields, '$.anniversary.ordinal')    AS anniversary_ordinal,
    json_extract(p.fields, '$.anniversary.elapsed')    AS anniversary_elapsed,
    p.fields,
    p.attempts,
    p.last_error,
    p.updated_at,
    p.done_at
FROM personalizations p;
