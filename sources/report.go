package sources

// ReportFile is one report written beside an archived export: its name is
// the archived file's followed by Suffix (".report.json").
type ReportFile struct {
	Suffix string
	Body   []byte
}

// RenderReports renders the reports of an export once the archive knows
// where the export goes: archivedAs is its place relative to the drop
// folder ("failed/employees.csv"), which the reports name. The archive
// step calls it just before it writes them and moves the export.
type RenderReports func(archivedAs string) ([]ReportFile, error)
