-- runs.outcome admits interrupted, PostgreSQL dialect. Keep this file and
-- ../sqlite/00016_interrupted_runs.sql in step.
--
-- A run that its process did not end (a kill, a crash, a stop that cut it
-- short) is recorded as interrupted: by the process itself when a stop cut
-- it short, else by the next run of its job and tenant, or the next start,
-- once the run's lock is free. Runs that earlier versions marked failed
-- with the error "interrupted: ..." become interrupted.
--
-- Down turns interrupted runs back into failed ones and restores the CHECK.

-- +goose Up
ALTER TABLE runs DROP CONSTRAINT runs_outcome_check;
ALTER TABLE runs ADD CONSTRAINT runs_outcome_check
    CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked', 'interrupted'));
UPDATE runs SET outcome = 'interrupted' WHERE outcome = 'failed' AND error LIKE 'interrupted:%';
COMMENT ON COLUMN runs.outcome IS 'running, ok, attention, failed, safeguard (stopped by a safeguard), locked (another run held the lock) or interrupted (its process stopped or died before the run finished).';

-- +goose Down
UPDATE runs SET outcome = 'failed' WHERE outcome = 'interrupted';
ALTER TABLE runs DROP CONSTRAINT runs_outcome_check;
ALTER TABLE runs ADD CONSTRAINT runs_outcome_check
    CHECK (outcome IN ('running', 'ok', 'attention', 'failed', 'safeguard', 'locked'));
COMMENT ON COLUMN runs.outcome IS 'running, ok, attention, failed, safeguard (stopped by a safeguard) or locked (another run held the lock).';
