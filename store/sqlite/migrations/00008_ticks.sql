-- Ticks claimed by daemon replicas, and which replica ran each run, SQLite
-- dialect. Keep this file and ../postgres/00008_ticks.sql in step. On SQLite
-- one daemon runs every tick; the table is there so that both dialects hold
-- the same state.

-- +goose Up
CREATE TABLE ticks (
    job         TEXT NOT NULL,        -- which job the tick runs
    tenant      TEXT NOT NULL,        -- tenant (company) of the job
    tick_at     TIMESTAMP NOT NULL,   -- the scheduled time of the tick, not a clock reading
    replica     TEXT NOT NULL,        -- the replica that claimed and ran the tick
    claimed_at  TIMESTAMP NOT NULL,   -- when it claimed the tick, by its clock
    finished_at TIMESTAMP,            -- when the run ended; NULL while running or when the replica died
    outcome     TEXT,                 -- how the run ended (as runs.outcome); NULL while running
    PRIMARY KEY (job, tenant, tick_at)
);

-- The process that made the run; '' for runs recorded before it was kept.
ALTER TABLE runs ADD COLUMN replica TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN replica;
DROP TABLE ticks;
