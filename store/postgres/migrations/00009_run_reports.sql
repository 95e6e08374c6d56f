-- The reports written beside a run's archived export, linked from its run
-- record: a JSON array of their names relative to the drop folder
-- ("processed/employees.csv.report.html"). Keep this file and
-- ../sqlite/00009_run_reports.sql in step.

-- +goose Up
ALTER TABLE runs ADD COLUMN reports TEXT NOT NULL DEFAULT '[]';
COMMENT ON COLUMN runs.reports IS 'JSON array of the reports written beside the run''s archived export (HTML, JSON, rejects CSV), relative to the tenant''s drop folder; [] when none.';

-- +goose Down
ALTER TABLE runs DROP COLUMN reports;
