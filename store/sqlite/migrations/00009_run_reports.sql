-- The reports written beside a run's archived export, linked from its run
-- record: a JSON array of their names relative to the drop folder
-- ("processed/employees.csv.report.html"). Keep this file and
-- ../postgres/00009_run_reports.sql in step.

-- +goose Up
ALTER TABLE runs ADD COLUMN reports TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE runs DROP COLUMN reports;
