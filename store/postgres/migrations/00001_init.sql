-- hrsync state, PostgreSQL dialect. Every table lives in the schema the store
-- was opened with (it is the connection's search_path). Times are timestamptz,
-- calendar dates are date, money amounts are numeric. Keep this file and
-- ../sqlite/00001_init.sql in step; each table and column is also described
-- with COMMENT ON so analysts see it in their SQL tools.

-- +goose Up

-- runs: one row per run of a job for a tenant.
CREATE TABLE runs (
    id          text PRIMARY KEY,
    job         text NOT NULL CHECK (job IN ('people', 'personalize', 'orders')),
    tenant      text NOT NULL,
    dry_run     boolean NOT NULL DEFAULT false,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    outcome     text NOT NULL DEFAULT 'running'
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked')),
    counts      jsonb NOT NULL DEFAULT '{}',
    error       text NOT NULL DEFAULT '',
    source_rows integer
);
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMENT ON TABLE runs IS 'One row per run of a job for a tenant, written when it starts and completed when it ends.';
COMMENT ON COLUMN runs.id IS 'Run id, a UUID made by the caller.';
COMMENT ON COLUMN runs.job IS 'Which job ran: people, personalize or orders.';
COMMENT ON COLUMN runs.tenant IS 'Tenant (company) the run served.';
COMMENT ON COLUMN runs.dry_run IS 'True when the run only planned: no API call, no state change.';
COMMENT ON COLUMN runs.started_at IS 'When the run began.';
COMMENT ON COLUMN runs.finished_at IS 'When the run ended; NULL while running (or if it crashed).';
COMMENT ON COLUMN runs.outcome IS 'running, ok, attention, failed, safeguard (stopped by a safeguard) or locked (another run held the lock).';
COMMENT ON COLUMN runs.counts IS 'JSON object of named counters (new, changed, departed, ...).';
COMMENT ON COLUMN runs.error IS 'Why the run failed or needs attention; empty when none.';
COMMENT ON COLUMN runs.source_rows IS 'Rows read from the source (file or SQL query); NULL when the run read none.';

-- rejections: rows of a run's source that were not accepted.
CREATE TABLE rejections (
    id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    source text NOT NULL,
    line   integer NOT NULL,
    field  text NOT NULL DEFAULT '',
    reason text NOT NULL
);
CREATE INDEX rejections_run_line ON rejections (run_id, line);
COMMENT ON TABLE rejections IS 'Rows of a run''s source that were not accepted, with why.';
COMMENT ON COLUMN rejections.id IS 'Insertion order.';
COMMENT ON COLUMN rejections.run_id IS 'The run that read the row.';
COMMENT ON COLUMN rejections.source IS 'File name, or sql:<tenant>.';
COMMENT ON COLUMN rejections.line IS '1-based line (CSV) or row (SQL) of the rejected record.';
COMMENT ON COLUMN rejections.field IS 'Configured column name; empty for the whole row.';
COMMENT ON COLUMN rejections.reason IS 'Why the row was rejected.';

-- source_files: source files (by content hash) whose outcome was committed.
CREATE TABLE source_files (
    tenant         text NOT NULL,
    sha256         text NOT NULL,
    name           text NOT NULL,
    size           bigint NOT NULL,
    row_count      integer NOT NULL,
    rejected_count integer NOT NULL,
    outcome        text NOT NULL CHECK (outcome IN ('processed', 'failed')),
    run_id         text NOT NULL REFERENCES runs (id),
    processed_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, sha256)
);
COMMENT ON TABLE source_files IS 'Every source file (by content hash) whose outcome was committed, so that a file is processed once.';
COMMENT ON COLUMN source_files.tenant IS 'Tenant the file was dropped for.';
COMMENT ON COLUMN source_files.sha256 IS 'Hex SHA-256 of the file''s bytes.';
COMMENT ON COLUMN source_files.name IS 'File name as dropped.';
COMMENT ON COLUMN source_files.size IS 'Size in bytes.';
COMMENT ON COLUMN source_files.row_count IS 'Data rows read.';
COMMENT ON COLUMN source_files.rejected_count IS 'Rows rejected.';
COMMENT ON COLUMN source_files.outcome IS 'processed (archived to processed/) or failed (moved to failed/).';
COMMENT ON COLUMN source_files.run_id IS 'The run that handled the file.';
COMMENT ON COLUMN source_files.processed_at IS 'When its outcome was committed.';

-- people: every person of a tenant hrsync knows. No birth date is kept.
CREATE TABLE people (
    tenant                 text NOT NULL,
    external_id            text NOT NULL,
    email                  text NOT NULL,
    first_name             text NOT NULL DEFAULT '',
    last_name              text NOT NULL DEFAULT '',
    department             text NOT NULL DEFAULT '',
    location               text NOT NULL DEFAULT '',
    start_date             date,
    remote_id              text,
    fingerprint            bigint NOT NULL,
    first_seen_at          timestamptz NOT NULL,
    last_seen_at           timestamptz NOT NULL,
    departed_at            timestamptz,
    created_on_platform_at timestamptz,
    PRIMARY KEY (tenant, external_id)
);
CREATE INDEX people_tenant_email ON people (tenant, email);
COMMENT ON TABLE people IS 'Every person of a tenant hrsync knows, as last read from the HR source. No birth date is kept.';
COMMENT ON COLUMN people.tenant IS 'Tenant (company).';
COMMENT ON COLUMN people.external_id IS 'The HR system''s id for the person.';
COMMENT ON COLUMN people.email IS 'Normalized (lower-case) e-mail.';
COMMENT ON COLUMN people.first_name IS 'Given name.';
COMMENT ON COLUMN people.last_name IS 'Family name.';
COMMENT ON COLUMN people.department IS 'Department as the HR source names it.';
COMMENT ON COLUMN people.location IS 'Work location as the HR source names it.';
COMMENT ON COLUMN people.start_date IS 'First working day; NULL when not given.';
COMMENT ON COLUMN people.remote_id IS 'The platform''s id for the person; NULL until the platform confirms creation.';
COMMENT ON COLUMN people.fingerprint IS 'xxhash of the normalized fields, computed by the sync job, to detect changes.';
COMMENT ON COLUMN people.first_seen_at IS 'First time a source listed the person.';
COMMENT ON COLUMN people.last_seen_at IS 'Last time the person''s row was written from a source.';
COMMENT ON COLUMN people.departed_at IS 'When the person left the source; NULL while active.';
COMMENT ON COLUMN people.created_on_platform_at IS 'When the platform confirmed the person''s creation; NULL before.';

-- api_journal: one row per write call to the platform.
CREATE TABLE api_journal (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          text NOT NULL REFERENCES runs (id),
    tenant          text NOT NULL,
    operation       text NOT NULL,
    idempotency_key text NOT NULL,
    request_sha     text NOT NULL,
    item_count      integer NOT NULL,
    state           text NOT NULL CHECK (state IN ('sent', 'succeeded', 'not_applied', 'unknown')),
    http_status     integer,
    error_code      text NOT NULL DEFAULT '',
    error_message   text NOT NULL DEFAULT '',
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    resend_of       bigint REFERENCES api_journal (id)
);
CREATE INDEX api_journal_tenant_state ON api_journal (tenant, state);
CREATE INDEX api_journal_run ON api_journal (run_id);
COMMENT ON TABLE api_journal IS 'One row per write call to the platform: the intent is written before the call (state sent), the outcome after.';
COMMENT ON COLUMN api_journal.id IS 'Journal id.';
COMMENT ON COLUMN api_journal.run_id IS 'The run that made the call.';
COMMENT ON COLUMN api_journal.tenant IS 'Tenant the call was for.';
COMMENT ON COLUMN api_journal.operation IS 'API operation, e.g. createPeople.';
COMMENT ON COLUMN api_journal.idempotency_key IS 'Idempotency-Key header sent with the call.';
COMMENT ON COLUMN api_journal.request_sha IS 'Hex SHA-256 of the request body.';
COMMENT ON COLUMN api_journal.item_count IS 'Items (people) in the request.';
COMMENT ON COLUMN api_journal.state IS 'sent (intent committed, no answer yet), succeeded, not_applied (certainly not processed) or unknown.';
COMMENT ON COLUMN api_journal.http_status IS 'HTTP status of the answer; NULL when none came.';
COMMENT ON COLUMN api_journal.error_code IS 'Error code from the answer or the client; empty when none.';
COMMENT ON COLUMN api_journal.error_message IS 'Error message from the answer or the client; empty when none.';
COMMENT ON COLUMN api_journal.started_at IS 'When the intent was committed.';
COMMENT ON COLUMN api_journal.finished_at IS 'When the outcome was committed; NULL while unanswered.';
COMMENT ON COLUMN api_journal.resend_of IS 'The held entry this call repeats with the same Idempotency-Key; NULL for a first send.';

-- grants: the ledger of balance grants.
CREATE TABLE grants (
    grant_key   text PRIMARY KEY,
    tenant      text NOT NULL,
    external_id text NOT NULL,
    reason      text NOT NULL,
    occurrence  text NOT NULL,
    amount      numeric NOT NULL,
    state       text NOT NULL CHECK (state IN ('pending', 'applied', 'not_applied', 'unknown', 'voided')),
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    note        text NOT NULL DEFAULT '',
    journal_id  bigint REFERENCES api_journal (id),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (tenant, external_id, reason, occurrence),
    FOREIGN KEY (tenant, external_id) REFERENCES people (tenant, external_id)
);
CREATE INDEX grants_tenant_state ON grants (tenant, state);
CREATE INDEX grants_journal ON grants (journal_id);
COMMENT ON TABLE grants IS 'Ledger of balance grants, one row per deterministic grant key; the unique constraints make a grant applied at most once.';
COMMENT ON COLUMN grants.grant_key IS 'tenant/externalId/reason/occurrence (model.GrantKey).';
COMMENT ON COLUMN grants.tenant IS 'Tenant.';
COMMENT ON COLUMN grants.external_id IS 'Person granted.';
COMMENT ON COLUMN grants.reason IS 'Why, e.g. welcome.';
COMMENT ON COLUMN grants.occurrence IS 'Which occurrence of the reason, e.g. a date or a year.';
COMMENT ON COLUMN grants.amount IS 'Credits or gifts granted.';
COMMENT ON COLUMN grants.state IS 'pending (intent committed), applied, not_applied (safe to send again), unknown (held for an operator) or voided.';
COMMENT ON COLUMN grants.attempts IS 'How many times the grant was sent.';
COMMENT ON COLUMN grants.last_error IS 'Last failure, or why the grant is held; empty when none.';
COMMENT ON COLUMN grants.note IS 'The operator''s note on the last manual transition.';
COMMENT ON COLUMN grants.journal_id IS 'The API journal entry (batch) the grant was last sent in; NULL before.';
COMMENT ON COLUMN grants.created_at IS 'When the intent was first committed.';
COMMENT ON COLUMN grants.updated_at IS 'Last change of state.';

-- +goose Down
DROP TABLE grants;
DROP TABLE api_journal;
DROP TABLE people;
DROP TABLE source_files;
DROP TABLE rejections;
DROP TABLE runs;
