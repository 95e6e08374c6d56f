-- Recurring and campaign grants (the grants job), PostgreSQL dialect. Keep
-- this file and ../sqlite/00007_rule_grants.sql in step. (runs.job admits
-- 'grants' since 00006.)

-- +goose Up

CREATE TABLE grant_days (
    tenant     text NOT NULL,
    rule       text NOT NULL,
    first_day  date NOT NULL,
    last_day   date NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, rule)
);
COMMENT ON COLUMN grant_days.tenant IS 'Tenant.';
COMMENT ON TABLE grant_days IS 'Per tenant and grant rule, the first day a run of the grants job considered the rule (catch-up never reaches before it) and the last day a run processed.';
COMMENT ON COLUMN grant_days.rule IS 'The rule''s name (the grants'' reason).';
COMMENT ON COLUMN grant_days.first_day IS 'First day a run considered the rule, in the rules'' time zone.';
COMMENT ON COLUMN grant_days.last_day IS 'Last day a run processed, in the rules'' time zone.';
COMMENT ON COLUMN grant_days.updated_at IS 'When last_day was written.';

CREATE TABLE grant_birthdays (
    tenant      text NOT NULL,
    external_id text NOT NULL,
    month       integer NOT NULL CHECK (month BETWEEN 1 AND 12),
    day         integer NOT NULL CHECK (day BETWEEN 1 AND 31),
    PRIMARY KEY (tenant, external_id),
    FOREIGN KEY (tenant, external_id) REFERENCES people (tenant, external_id) ON DELETE CASCADE
);
COMMENT ON COLUMN grant_birthdays.tenant IS 'Tenant.';
COMMENT ON COLUMN grant_birthdays.external_id IS 'The person.';
COMMENT ON COLUMN grant_birthdays.month IS 'Month of birth (1-12).';
COMMENT ON COLUMN grant_birthdays.day IS 'Day of the month of birth.';
COMMENT ON TABLE grant_birthdays IS 'The month and day of birth (never the year) of the people a birthday rule serves, as the last good export gave them, so that a run catching up on missed days knows the birthday of a person the newest export no longer lists.';

CREATE VIEW grants_by_rule_month AS
SELECT tenant,
       reason                                             AS rule,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM')  AS month,
       state,
       COUNT(*)                                           AS grants,
       SUM(amount)                                        AS total
FROM grants
GROUP BY tenant, reason, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM'), state;
COMMENT ON VIEW grants_by_rule_month IS 'The grants ledger by tenant, rule (reason), month (UTC, of the first intent) and state: count and total amount.';
COMMENT ON COLUMN grants_by_rule_month.tenant IS 'Tenant.';
COMMENT ON COLUMN grants_by_rule_month.rule IS 'The grant''s reason: a grant rule''s name (birthday, anniversary, a campaign), or the people sync''s initial grant.';
COMMENT ON COLUMN grants_by_rule_month.month IS 'YYYY-MM (UTC) of when the grant''s intent was first committed.';
COMMENT ON COLUMN grants_by_rule_month.state IS 'pending, applied, not_applied, unknown (held) or voided.';
COMMENT ON COLUMN grants_by_rule_month.grants IS 'How many grants.';
COMMENT ON COLUMN grants_by_rule_month.total IS 'Their total amount.';

-- +goose Down
DROP VIEW grants_by_rule_month;
DROP TABLE grant_birthdays;
DROP TABLE grant_days;
