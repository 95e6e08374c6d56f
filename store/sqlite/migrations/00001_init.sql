-- hrsync state, SQLite dialect. Times are UTC text in SQLite's
-- "YYYY-MM-DD HH:MM:SS.fffffffff+00:00" layout (declared TIMESTAMP so the
-- driver reads them back as times); calendar dates are "YYYY-MM-DD" (DATE).
-- Money amounts are REAL. Keep this file and ../postgres/00001_init.sql in step.

-- +goose Up

-- runs: one row per run of a job for a tenant, written when it starts and
-- completed when it ends.
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,            -- UUID made by the caller
    job         TEXT NOT NULL                -- which job ran
                CHECK (job IN ('people', 'personalize', 'orders')),
    tenant      TEXT NOT NULL,               -- tenant (company) the run served
    dry_run     INTEGER NOT NULL DEFAULT 0   -- 1 when the run only planned (no API call, no state change)
                CHECK (dry_run IN (0, 1)),
    started_at  TIMESTAMP NOT NULL,          -- when the run began
    finished_at TIMESTAMP,                   -- when the run ended; NULL while running (or if it crashed)
    outcome     TEXT NOT NULL DEFAULT 'running' -- how it ended
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked')),
    counts      TEXT NOT NULL DEFAULT '{}',  -- JSON object of named counters (new, changed, departed, ...)
    error       TEXT NOT NULL DEFAULT '',    -- why the run failed or needs attention; '' when none
    source_rows INTEGER                      -- rows read from the source (file or SQL query); NULL when the run read none
);
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);

-- rejections: the rows of a run's source that were not accepted, with why.
CREATE TABLE rejections (
    id     INTEGER PRIMARY KEY AUTOINCREMENT, -- insertion order
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, -- the run that read the row
    source TEXT NOT NULL,                -- file name, or "sql:<tenant>"
    line   INTEGER NOT NULL,             -- 1-based line (CSV) or row (SQL) of the rejected record
    field  TEXT NOT NULL DEFAULT '',     -- configured column name; '' for the whole row
    reason TEXT NOT NULL                 -- why the row was rejected
);
CREATE INDEX rejections_run_line ON rejections (run_id, line);

-- source_files: every source file (by content hash) whose outcome was
-- committed, so that a file is processed once.
CREATE TABLE source_files (
    tenant         TEXT NOT NULL,        -- tenant the file was dropped for
    sha256         TEXT NOT NULL,        -- hex SHA-256 of the file's bytes
    name           TEXT NOT NULL,        -- file name as dropped
    size           INTEGER NOT NULL,     -- size in bytes
    row_count      INTEGER NOT NULL,     -- data rows read
    rejected_count INTEGER NOT NULL,     -- rows rejected
    outcome        TEXT NOT NULL         -- processed (archived to processed/) or failed (to failed/)
                   CHECK (outcome IN ('processed', 'failed')),
    run_id         TEXT NOT NULL REFERENCES runs (id), -- the run that handled it
    processed_at   TIMESTAMP NOT NULL,   -- when its outcome was committed
    PRIMARY KEY (tenant, sha256)
);

-- people: every person of a tenant hrsync knows, as last read from the HR
-- source. No birth date is kept (DESIGN invariant 5).
CREATE TABLE people (
    tenant                 TEXT NOT NULL,    -- tenant (company)
    external_id            TEXT NOT NULL,    -- the HR system's id for the person
    email                  TEXT NOT NULL,    -- normalized (lower-case) e-mail
    first_name             TEXT NOT NULL DEFAULT '', -- given name
    last_name              TEXT NOT NULL DEFAULT '', -- family name
    department             TEXT NOT NULL DEFAULT '', -- department as the HR source names it
    location               TEXT NOT NULL DEFAULT '', -- work location as the HR source names it
    start_date             DATE,             -- first working day; NULL when not given
    remote_id              TEXT,             -- the platform's id; NULL until the platform confirms creation
    fingerprint            INTEGER NOT NULL, -- xxhash of the normalized fields, computed by the sync job
    first_seen_at          TIMESTAMP NOT NULL, -- first time a source listed the person
    last_seen_at           TIMESTAMP NOT NULL, -- last time the person's row was written from a source
    departed_at            TIMESTAMP,        -- when the person left the source; NULL while active
    created_on_platform_at TIMESTAMP,        -- when the platform confirmed creation; NULL before
    PRIMARY KEY (tenant, external_id)
);
CREATE INDEX people_tenant_email ON people (tenant, email);

-- api_journal: one row per write call to the platform: intent written before
-- the call (state sent), outcome after.
CREATE TABLE api_journal (
    id              INTEGER PRIMARY KEY AUTOINCREMENT, -- journal id
    run_id          TEXT NOT NULL REFERENCES runs (id), -- run that made the call
    tenant          TEXT NOT NULL,       -- tenant the call was for
    operation       TEXT NOT NULL,       -- API operation, e.g. createPeople
    idempotency_key TEXT NOT NULL,       -- Idempotency-Key header sent with the call
    request_sha     TEXT NOT NULL,       -- hex SHA-256 of the request body
    item_count      INTEGER NOT NULL,    -- items (people) in the request
    state           TEXT NOT NULL        -- sent (intent committed), succeeded, not_applied (certainly not processed), unknown
                    CHECK (state IN ('sent', 'succeeded', 'not_applied', 'unknown')),
    http_status     INTEGER,             -- HTTP status of the answer; NULL when none came
    error_code      TEXT NOT NULL DEFAULT '', -- error code from the answer or the client
    error_message   TEXT NOT NULL DEFAULT '', -- error message from the answer or the client
    started_at      TIMESTAMP NOT NULL,  -- when the intent was committed
    finished_at     TIMESTAMP,           -- when the outcome was committed; NULL while unanswered
    resend_of       INTEGER REFERENCES api_journal (id) -- the held entry this call repeats with the same key; NULL for a first send
);
CREATE INDEX api_journal_tenant_state ON api_journal (tenant, state);
CREATE INDEX api_journal_run ON api_journal (run_id);

-- grants: the ledger of balance grants, one row per deterministic grant key;
-- the unique constraints make a grant applied at most once.
CREATE TABLE grants (
    grant_key   TEXT PRIMARY KEY,        -- tenant/externalId/reason/occurrence (model.GrantKey)
    tenant      TEXT NOT NULL,           -- tenant
    external_id TEXT NOT NULL,           -- person granted
    reason      TEXT NOT NULL,           -- why, e.g. welcome
    occurrence  TEXT NOT NULL,           -- which occurrence of the reason, e.g. a date or year
    amount      REAL NOT NULL,           -- credits or gifts granted
    state       TEXT NOT NULL            -- pending, applied, not_applied, unknown, voided (model.GrantState)
                CHECK (state IN ('pending', 'applied', 'not_applied', 'unknown', 'voided')),
    attempts    INTEGER NOT NULL DEFAULT 0, -- how many times it was sent
    last_error  TEXT NOT NULL DEFAULT '', -- last failure, or why it is held
    note        TEXT NOT NULL DEFAULT '', -- the operator's note on the last manual transition
    journal_id  INTEGER REFERENCES api_journal (id), -- batch it was last sent in; NULL before
    created_at  TIMESTAMP NOT NULL,      -- when the intent was first committed
    updated_at  TIMESTAMP NOT NULL,      -- last change of state
    UNIQUE (tenant, external_id, reason, occurrence),
    FOREIGN KEY (tenant, external_id) REFERENCES people (tenant, external_id)
);
CREATE INDEX grants_tenant_state ON grants (tenant, state);
CREATE INDEX grants_journal ON grants (journal_id);

-- +goose Down
DROP TABLE grants;
DROP TABLE api_journal;
DROP TABLE people;
DROP TABLE source_files;
DROP TABLE rejections;
DROP TABLE runs;
