-- runs.outcome admits interrupted, SQLite dialect. Keep this file and
-- ../postgres/00016_interrupted_runs.sql in step.
--
-- A run that its process did not end (a kill, a crash, a stop that cut it
-- short) is recorded as interrupted: by the process itself when a stop cut
-- it short, else by the next run of its job and tenant, or the next start,
-- once the run's lock is free. Runs that earlier versions marked failed
-- with the error "interrupted: ..." become interrupted. SQLite changes a
-- CHECK constraint only by rebuilding the table, as in 00011_open_jobs; every
-- column is copied, 00014's unarchived_report included.
--
-- Down turns interrupted runs back into failed ones and restores the CHECK.

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
    outcome     TEXT NOT NULL DEFAULT 'running' -- how it ended (interrupted: its process stopped or died first)
                CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked', 'interrupted')),
    counts      TEXT NOT NULL DEFAULT '{}',  -- JSON object of named counters (new, changed, departed, ...)
    error       TEXT NOT NULL DEFAULT '',    -- why the run failed or needs attention; '' when none
    source_rows INTEGER,                     -- rows read from the source (file or SQL query); NULL when the run read none
    replica     TEXT NOT NULL DEFAULT '',    -- the process that made the run; '' for runs recorded before it was kept
    reports     TEXT NOT NULL DEFAULT '[]',  -- JSON array of the reports written beside the run's archived export
    unarchived_report TEXT                   -- JSON report of an export applied but not archived; NULL when none (00014)
);
INSERT INTO runs_new (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports,
    unarchived_report)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports,
    unarchived_report FROM runs;
UPDATE runs_new SET outcome = 'interrupted' WHERE outcome = 'failed' AND error LIKE 'interrupted:%';
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
UPDATE runs SET outcome = 'failed' WHERE outcome = 'interrupted';
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
    reports     TEXT NOT NULL DEFAULT '[]',  -- JSON array of the reports written beside the run's archived export
    unarchived_report TEXT                   -- JSON report of an export applied but not archived; NULL when none (00014)
);
INSERT INTO runs_new (id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports,
    unarchived_report)
SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports,
    unarchived_report FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMIT;
PRAGMA foreign_keys = ON;

