-- Personalization of collections for new hires, PostgreSQL dialect. Keep this
-- file and ../sqlite/00003_personalize.sql in step. The derived fields are
-- jsonb; every table, view and column is described with COMMENT ON.

-- +goose Up

CREATE TABLE personalizations (
    tenant             text NOT NULL,
    external_id        text NOT NULL,
    collection_id      text NOT NULL,
    fingerprint        bigint NOT NULL,
    state              text NOT NULL CHECK (state IN ('pending', 'done', 'error', 'retry', 'failed')),
    platform_status    text NOT NULL DEFAULT '' CHECK (platform_status IN ('', 'Pending', 'Done', 'Error')),
    sha                text NOT NULL DEFAULT '',
    fields             jsonb NOT NULL DEFAULT '{}',
    attempts           integer NOT NULL DEFAULT 0,
    failures           integer NOT NULL DEFAULT 0,
    last_error         text NOT NULL DEFAULT '',
    next_attempt_at    timestamptz,
    first_requested_at timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    done_at            timestamptz,
    PRIMARY KEY (tenant, external_id, collection_id)
);
CREATE INDEX personalizations_tenant_state ON personalizations (tenant, collection_id, state);
COMMENT ON TABLE personalizations IS 'One row per person and collection personalized, written as each personalize call''s outcome arrives. sha, platform_status and fields belong to the source fields whose fingerprint the row carries.';
COMMENT ON COLUMN personalizations.tenant IS 'Tenant (company).';
COMMENT ON COLUMN personalizations.external_id IS 'The person, as people.external_id.';
COMMENT ON COLUMN personalizations.collection_id IS 'The collection personalized.';
COMMENT ON COLUMN personalizations.fingerprint IS 'xxhash of exactly the source fields sent (the birth date is kept only as part of this hash).';
COMMENT ON COLUMN personalizations.state IS 'pending (asked again next run), done, error (the platform found the source fields unusable), retry (a call failed; tried again after next_attempt_at) or failed (left for an operator).';
COMMENT ON COLUMN personalizations.platform_status IS 'Status the platform last returned: Pending, Done or Error; empty before any answer.';
COMMENT ON COLUMN personalizations.sha IS 'The sha the platform returned; empty before any answer.';
COMMENT ON COLUMN personalizations.fields IS 'The derived personalization fields (name, anniversary, birth, work) as the platform returned them.';
COMMENT ON COLUMN personalizations.attempts IS 'Personalize calls made for this fingerprint.';
COMMENT ON COLUMN personalizations.failures IS 'Consecutive failed calls for this fingerprint.';
COMMENT ON COLUMN personalizations.last_error IS 'Why the last call failed; empty after a success.';
COMMENT ON COLUMN personalizations.next_attempt_at IS 'When a retry is due; NULL unless state is retry.';
COMMENT ON COLUMN personalizations.first_requested_at IS 'First call for this fingerprint.';
COMMENT ON COLUMN personalizations.updated_at IS 'When the last outcome was committed.';
COMMENT ON COLUMN personalizations.done_at IS 'When the platform first answered Done for this fingerprint; NULL before.';

CREATE TABLE personalize_collections (
    tenant        text NOT NULL,
    collection_id text NOT NULL,
    reason        text NOT NULL,
    refused_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant, collection_id)
);
COMMENT ON TABLE personalize_collections IS 'Collections the platform refused to personalize (422), so that a run reports them once and does not call them every run.';
COMMENT ON COLUMN personalize_collections.tenant IS 'Tenant.';
COMMENT ON COLUMN personalize_collections.collection_id IS 'The collection.';
COMMENT ON COLUMN personalize_collections.reason IS 'The platform''s answer.';
COMMENT ON COLUMN personalize_collections.refused_at IS 'When the platform last answered 422.';

CREATE VIEW personalization_report AS
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

-- +goose Down
DROP VIEW personalization_report;
DROP TABLE personalize_collections;
DROP TABLE personalizations;
