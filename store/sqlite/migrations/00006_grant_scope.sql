-- The job that made each grant and call, and runs of the grants job,
-- SQLite dialect. Keep this file and ../postgres/00006_grant_scope.sql in step.
--
-- Two jobs send grants (the people sync's initial balance, the grants job's
-- rules), each under its own lock. A run holds as unknown the grants and
-- calls left in flight by a crash, and may resend held calls; it must act on
-- its own job's only, never on a call another job has in flight. The scope
-- of a grant is its job and its rule (the reason column); a call's is its
-- job. Every row written before this migration was the people sync's.
--
-- runs.job also admits 'grants'. SQLite changes a CHECK constraint only by
-- rebuilding the table, with foreign keys off (rejections cascade from
-- runs: dropping the old table with them on would delete them), which
-- PRAGMA allows only outside a transaction: the steps run in an explicit
-- one. Every row is copied with its id, so every reference still resolves.

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN;
ALTER TABLE api_journal ADD COLUMN job TEXT NOT NULL DEFAULT 'people'; -- job that made the call: people, grants
ALTER TABLE grants ADD COLUMN job TEXT NOT NULL DEFAULT 'people';      -- job that made the grant; its rule is reason
CREATE INDEX api_journal_tenant_job_state ON api_journal (tenant, job, state);
CREATE INDEX grants_tenant_job_state ON grants (tenant, job, state);
CREATE TABLE runs_new (
    id          TEXT PRIMARY KEY,            -- UUID made by the caller
    job         TEXT NOT NULL                -- which job ran
                CHECK (job IN ('people', 'personalize', 'orders', 'grants')),
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
INSERT INTO runs_new (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE runs_old (
    id          TEXT PRIMARY KEY,
    job         TEXT NOT NULL CHECK (job IN ('people', 'personalize', 'orders')),
    tenant      TEXT NOT NULL,
    dry_run     INTEGER NOT NULL DEFAULT 0 CHECK (dry_run IN (0, 1)),
    started_at  TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    outcome     TEXT NOT NULL DEFAULT 'running'
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked')),
    counts      TEXT NOT NULL DEFAULT '{}',
    error       TEXT NOT NULL DEFAULT '',
    source_rows INTEGER
);
INSERT INTO runs_old (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows FROM runs;
DROP TABLE runs;
ALTER TABLE runs_old RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
DROP INDEX grants_tenant_job_state;
DROP INDEX api_journal_tenant_job_state;
ALTER TABLE grants DROP COLUMN job;
ALTER TABLE api_journal DROP COLUMN job;
COMMIT;
PRAGMA foreign_keys = ON;
