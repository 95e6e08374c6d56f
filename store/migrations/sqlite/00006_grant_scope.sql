-- The job that made each grant and call, SQLite dialect. Keep this file and
-- ../postgres/00006_grant_scope.sql in step.
--
-- Two jobs send grants (the people sync's initial balance, the grants job's
-- rules), each under its own lock. A run holds as unknown the grants and
-- calls left in flight by a crash, and may resend held calls; it must act on
-- its own job's only, never on a call another job has in flight. The scope
-- of a grant is its job and its rule (the reason column); a call's is its
-- job. Every row written before this migration was the people sync's.

-- +goose Up
ALTER TABLE api_journal ADD COLUMN job TEXT NOT NULL DEFAULT 'people'; -- job that made the call: people, grants
ALTER TABLE grants ADD COLUMN job TEXT NOT NULL DEFAULT 'people';      -- job that made the grant; its rule is reason
CREATE INDEX api_journal_tenant_job_state ON api_journal (tenant, job, state);
CREATE INDEX grants_tenant_job_state ON grants (tenant, job, state);

-- +goose Down
DROP INDEX grants_tenant_job_state;
DROP INDEX api_journal_tenant_job_state;
ALTER TABLE grants DROP COLUMN job;
ALTER TABLE api_journal DROP COLUMN job;
