-- Personalization of collections for new hires, SQLite dialect. Keep this file
-- and ../postgres/00003_personalize.sql in step. Times are UTC text declared
-- TIMESTAMP; the derived fields are JSON text.

-- +goose Up

-- personalizations: one row per person and collection, written as each
-- personalize call's outcome arrives. The row's sha, status and fields
-- always belong to the source fields whose fingerprint it carries.
CREATE TABLE personalizations (
    tenant          TEXT NOT NULL,          -- tenant (company)
    external_id     TEXT NOT NULL,          -- the person, as people.external_id
    collection_id   TEXT NOT NULL,          -- the collection personalized
    fingerprint     INTEGER NOT NULL,       -- xxhash of exactly the source fields sent (birth date included, only as part of this hash)
    state           TEXT NOT NULL           -- pending (asked again next run), done, error (the platform found the fields unusable), retry (a call failed; tried again after next_attempt_at), failed (left for an operator)
                    CHECK (state IN ('pending', 'done', 'error', 'retry', 'failed')),
    platform_status TEXT NOT NULL DEFAULT '' -- status the platform last returned: Pending, Done, Error; empty before any answer
                    CHECK (platform_status IN ('', 'Pending', 'Done', 'Error')),
    sha             TEXT NOT NULL DEFAULT '', -- sha the platform returned; empty before any answer
    fields          TEXT NOT NULL DEFAULT '{}', -- derived fields as the platform returned them (JSON object)
    attempts        INTEGER NOT NULL DEFAULT 0, -- personalize calls made for this fingerprint
    failures        INTEGER NOT NULL DEFAULT 0, -- consecutive failed calls for this fingerprint
    last_error      TEXT NOT NULL DEFAULT '', -- why the last call failed; empty after a success
    next_attempt_at TIMESTAMP,              -- when a retry is due; NULL unless state is retry
    first_requested_at TIMESTAMP NOT NULL,  -- first call for this fingerprint
    updated_at      TIMESTAMP NOT NULL,     -- when the last outcome was committed
    done_at         TIMESTAMP,              -- when the platform first answered Done for this fingerprint; NULL before
    PRIMARY KEY (tenant, external_id, collection_id)
);
CREATE INDEX personalizations_tenant_state ON personalizations (tenant, collection_id, state);

-- personalize_collections: collections the platform refused to personalize
-- (422), so that a run reports them once and does not call them every run.
CREATE TABLE personalize_collections (
    tenant            TEXT NOT NULL,        -- tenant
    collection_id     TEXT NOT NULL,        -- the collection
    reason            TEXT NOT NULL,        -- the platform's answer
    refused_at        TIMESTAMP NOT NULL,   -- when the platform last answered 422
    PRIMARY KEY (tenant, collection_id)
);

-- personalization_report: one row per person and collection with the
-- derived fields flattened; join it to people on (tenant, external_id).
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

-- +goose Down
DROP VIEW personalization_report;
DROP TABLE personalize_collections;
DROP TABLE personalizations;
