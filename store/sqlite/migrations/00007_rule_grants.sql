-- Recurring and campaign grants (the grants job), SQLite dialect. Keep this
-- file and ../postgres/00007_rule_grants.sql in step. (runs.job admits
-- 'grants' since 00006.)

-- +goose Up
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

-- +goose Down
DROP VIEW grants_by_rule_month;
DROP TABLE grant_birthdays;
DROP TABLE grant_days;
