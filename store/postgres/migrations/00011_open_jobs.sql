-- runs.job admits any job's name, PostgreSQL dialect. Keep this file and
-- ../sqlite/00011_open_jobs.sql in step.
--
-- Jobs register with the runner; a new job must be able to record its runs
-- without a migration, so runs.job loses the CHECK that listed the four
-- jobs. The table, its indexes and comments stay as they are.
--
-- Down restores the CHECK; it fails while runs of another job are stored.

-- +goose Up
ALTER TABLE runs DROP CONSTRAINT runs_job_check;
COMMENT ON COLUMN runs.job IS 'Which job ran, by the name it registered with the runner: people, personalize, orders, grants, or a newer job.';

-- +goose Down
ALTER TABLE runs ADD CONSTRAINT runs_job_check CHECK (job IN ('people', 'personalize', 'orders', 'grants'));
COMMENT ON COLUMN runs.job IS 'Which job ran: people, personalize, orders or grants.';
