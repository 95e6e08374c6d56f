-- The report of a run whose export was applied but could not be archived
-- (the drop folder's server went away, permission, disk full): the JSON
-- of the export's report, kept until a later run archives the export with
-- it ("archived late"); NULL when nothing waits. Keep this file and
-- ../postgres/00014_late_archive.sql in step.

-- +goose Up
ALTER TABLE runs ADD COLUMN unarchived_report TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN unarchived_report;
