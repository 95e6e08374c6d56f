-- The day a grants rule grants a grant (YYYY-MM-DD in the rules' time
-- zone), so that a monthly budget counts it in the month of its occurrence
-- day, whichever day the run that sent it ran; NULL for the people sync's
-- grants and those recorded before this column (counted by created_at).
-- Keep this file and ../postgres/00011_grant_day.sql in step.

-- +goose Up
ALTER TABLE grants ADD COLUMN grant_day TEXT;

-- +goose Down
ALTER TABLE grants DROP COLUMN grant_day;
