-- runs.job admits any job's name, SQLite dialect. Keep this file and
-- ../postgres/00011_open_jobs.sql in step.
--
-- Jobs register with the runner; a new job must be able to record its runs
-- without a migration, so runs.job loses the CHECK that listed the four
-- jobs. SQLite drops a CHECK constraint only by rebuilding the table, with
-- foreign keys off (rejections cascade from runs: dropping the old table
-- with them on would delete them), which PRAGMA allows only outside a
-- transaction: the steps run in an explicit one, as in 00006_grant_scope.
-- Every row is copied with its id, so every reference still resolves.
--
-- Down restores the CHECK; it fails while runs of another job are stored.

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE runs_new (
    id          TEXT PRIMARY KEY,            -- UUID made by the caller
    job         TEXT NOT NULL,               -- which job ran (a name registered with the runner)
    tenant      TEXT NOT NULL,               -- tenant (company) the run served
    dry_run     INTEGER NOT NULL DEFAULT 0   -- 1 when the run only planned (no API call, no state change)
                CHECK (dry_run IN (0, 1)),
    started_at  TIMESTAMP NOT NULL,          -- when the run began
    finished_at TIMESTAMP,                   -- when the run ended; NULL while running (or if it crashed)
    outcome     TEXT NOT NULL DEFAULT 'running' -- how it ended
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked')),
    counts      TEXT NOT NULL DEFAULT '{}',  -- JSON object of named counters (new, changed, departed, ...)
    error       TEXT NOT NULL DEFAULT '',    -- why the run failed or needs attention; '' when none
    source_rows INTEGER,                     -- rows read from the source (file or SQL query); NULL when the run read none
    replica     TEXT NOT NULL DEFAULT '',    -- the process that made the run; '' for runs recorded before it was kept
    reports     TEXT NOT NULL DEFAULT '[]'   -- JSON array of the reports written beside the run's archived export
);
INSERT INTO runs_new (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports FROM runs;
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
    job         TEXT NOT NULL
                CHECK (job IN ('people', 'personalize', 'orders', 'grants')),
    tenant      TEXT NOT NULL,
    dry_run     INTEGER NOT NULL DEFAULT 0 CHECK (dry_run IN (0, 1)),
    started_at  TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    outcome     TEXT NOT NULL DEFAULT 'running'
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked')),
    counts      TEXT NOT NULL DEFAULT '{}',
    error       TEXT NOT NULL DEFAULT '',
    source_rows INTEGER,
    replica     TEXT NOT NULL DEFAULT '',
    reports     TEXT NOT NULL DEFAULT '[]'
);
INSERT INTO runs_old (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports FROM runs;
DROP TABLE runs;
ALTER TABLE runs_old RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMIT;
PRAGMA foreign_keys = ON;
