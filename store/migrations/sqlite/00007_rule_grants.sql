-- Recurring and campaign grants (the grants job), SQLite dialect. Keep this
-- file and ../postgres/00007_rule_grants.sql in step.
--
-- runs.job accepts 'grants'. SQLite cannot change a CHECK constraint in
-- place, so runs is rebuilt the documented way (create, copy, drop, rename)
-- with foreign keys off: dropping runs with them on would delete the
-- rejections of every run (ON DELETE CASCADE). Foreign keys are a setting of
-- the connection, so this migration runs outside a transaction and opens its
-- own; the store's writer holds one connection.

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN;
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

-- grant_days: per tenant and grant rule, the first day a run of the grants
-- job considered the rule (catch-up never reaches before it) and the last
-- day a run processed (hrsync status).
CREATE TABLE grant_days (
    tenant     TEXT NOT NULL,        -- tenant
    rule       TEXT NOT NULL,        -- the rule's name (the grants' reason)
    first_day  DATE NOT NULL,        -- first day a run considered the rule, in the rules' time zone
    last_day   DATE NOT NULL,        -- last day a run processed, in the rules' time zone
    updated_at TIMESTAMP NOT NULL,   -- when last_day was written
    PRIMARY KEY (tenant, rule)
);

-- grant_birthdays: the month and day of birth (never the year) of the
-- people a birthday rule serves, as the last good export gave them: a run
-- catching up on missed days still knows the birthday of a person whom the
-- newest export no longer lists (they left meanwhile).
CREATE TABLE grant_birthdays (
    tenant      TEXT NOT NULL,       -- tenant
    external_id TEXT NOT NULL,       -- the person
    month       INTEGER NOT NULL CHECK (month BETWEEN 1 AND 12), -- month of birth
    day         INTEGER NOT NULL CHECK (day BETWEEN 1 AND 31),   -- day of the month of birth
    PRIMARY KEY (tenant, external_id),
    FOREIGN KEY (tenant, external_id) REFERENCES people (tenant, external_id) ON DELETE CASCADE
);

-- grants_by_rule_month: for analysts, the ledger by tenant, rule (the
-- grant's reason: a grant rule's name, or the people job's reason), month
-- (UTC, of when the grant's intent was first committed) and state.
CREATE VIEW grants_by_rule_month AS
SELECT tenant,
       reason                        AS rule,
       strftime('%Y-%m', created_at) AS month,
       state,
       COUNT(*)                      AS grants,
       SUM(amount)                   AS total
FROM grants
GROUP BY tenant, reason, strftime('%Y-%m', created_at), state;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
DROP VIEW grants_by_rule_month;
DROP TABLE grant_birthdays;
DROP TABLE grant_days;
DELETE FROM runs WHERE job = 'grants';
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
INSERT INTO runs_old SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows FROM runs;
DROP TABLE runs;
ALTER TABLE runs_old RENAME TO runs;
CREATE INDEX runs_tenant_started ON runs (tenant, started_at);
COMMIT;
PRAGMA foreign_keys = ON;
