-- The cycle a run belongs to: a people cycle records one run per export it
-- processes, and `hrsync status` shows the worst run of a job's last cycle,
-- the outcome its exit code gave. '' for a cycle of one run, and for the
-- runs recorded before this column. Keep this file and
-- ../sqlite/00017_run_cycle.sql in step.

-- +goose Up
ALTER TABLE runs ADD COLUMN cycle text NOT NULL DEFAULT '';
COMMENT ON COLUMN runs.cycle IS 'The cycle the run belongs to (a people cycle records one run per export); empty for a cycle of one run.';

-- +goose Down
ALTER TABLE runs DROP COLUMN cycle;
