-- Ticks claimed by daemon replicas, and which replica ran each run,
-- PostgreSQL dialect. Keep this file and ../sqlite/00008_ticks.sql in step.
--
-- Several daemons on one PostgreSQL state share the tenants: at each
-- scheduled tick of a job of a tenant, the replica that first takes the
-- tick's lock inserts its row here and runs it; the others find the row (or
-- the lock) and leave the tick alone. The tick is the schedule's time, the
-- same on every replica whatever its clock says when it claims.

-- +goose Up
CREATE TABLE ticks (
    job         text NOT NULL,
    tenant      text NOT NULL,
    tick_at     timestamptz NOT NULL,
    replica     text NOT NULL,
    claimed_at  timestamptz NOT NULL,
    finished_at timestamptz,
    outcome     text,
    PRIMARY KEY (job, tenant, tick_at)
);
COMMENT ON TABLE ticks IS 'One row per scheduled tick of a job of a tenant that a daemon replica claimed: the first to insert it runs it. Rows older than an hour are deleted.';
COMMENT ON COLUMN ticks.job IS 'Which job the tick runs.';
COMMENT ON COLUMN ticks.tenant IS 'Tenant (company) of the job.';
COMMENT ON COLUMN ticks.tick_at IS 'The scheduled time of the tick (the schedule''s time, not a clock reading).';
COMMENT ON COLUMN ticks.replica IS 'The replica that claimed and ran the tick (--replica-id, default host name and process id).';
COMMENT ON COLUMN ticks.claimed_at IS 'When the replica claimed the tick, by its clock.';
COMMENT ON COLUMN ticks.finished_at IS 'When the run of the tick ended; NULL while running, or when the replica died during it.';
COMMENT ON COLUMN ticks.outcome IS 'How the run of the tick ended (as runs.outcome); NULL while running or when the replica died.';

ALTER TABLE runs ADD COLUMN replica text NOT NULL DEFAULT '';
COMMENT ON COLUMN runs.replica IS 'The process that made the run (--replica-id, default host name and process id); empty for runs recorded before it was kept.';

-- +goose Down
ALTER TABLE runs DROP COLUMN replica;
DROP TABLE ticks;
