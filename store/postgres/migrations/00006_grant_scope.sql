-- The job that made each grant and call, and runs of the grants job,
-- PostgreSQL dialect. Keep this file and ../sqlite/00006_grant_scope.sql in step.
--
-- Two jobs send grants (the people sync's initial balance, the grants job's
-- rules), each under its own lock. A run holds as unknown the grants and
-- calls left in flight by a crash, and may resend held calls; it must act on
-- its own job's only, never on a call another job has in flight. The scope
-- of a grant is its job and its rule (the reason column); a call's is its
-- job. Every row written before this migration was the people sync's.

-- +goose Up
ALTER TABLE api_journal ADD COLUMN job text NOT NULL DEFAULT 'people';
ALTER TABLE grants ADD COLUMN job text NOT NULL DEFAULT 'people';
CREATE INDEX api_journal_tenant_job_state ON api_journal (tenant, job, state);
CREATE INDEX grants_tenant_job_state ON grants (tenant, job, state);
COMMENT ON COLUMN api_journal.job IS 'The job that made the call (people, grants): a run holds or resends only its own job''s calls.';
ALTER TABLE runs DROP CONSTRAINT runs_job_check;
ALTER TABLE runs ADD CONSTRAINT runs_job_check CHECK (job IN ('people', 'personalize', 'orders', 'grants'));
COMMENT ON COLUMN runs.job IS 'Which job ran: people, personalize, orders or grants.';
COMMENT ON COLUMN grants.job IS 'The job that made the grant (people, grants); its rule is reason. Rows older than this column are the people sync''s.';

-- +goose Down
ALTER TABLE runs DROP CONSTRAINT runs_job_check;
ALTER TABLE runs ADD CONSTRAINT runs_job_check CHECK (job IN ('people', 'personalize', 'orders'));
COMMENT ON COLUMN runs.job IS 'Which job ran: people, personalize or orders.';
DROP INDEX grants_tenant_job_state;
DROP INDEX api_journal_tenant_job_state;
ALTER TABLE grants DROP COLUMN job;
ALTER TABLE api_journal DROP COLUMN job;
