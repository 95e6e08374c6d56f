package sources

import (
	"bytes"
	"io"
)

// ReportFile is one report written beside an archived export: its name is
// the archived file's followed by Suffix (".report.json").
type ReportFile struct {
	Suffix string
	// Write writes the report's content to w, as it is made: a JSON report
	// naming a million people is never held whole. A drop folder calls it
	// once per report it writes.
	Write func(w io.Writer) error
}

// ReportBytes is a report whose content is made already.
func ReportBytes(suffix string, body []byte) ReportFile {
	return ReportFile{Suffix: suffix, Write: func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	}}
}

// Bytes writes the report into memory: for a test, or a drop folder that
// needs the whole content at once.
func (r ReportFile) Bytes() ([]byte, error) {
	var b bytes.Buffer
	err := r.Write(&b)
	return b.Bytes(), err
}

// RenderReports renders the reports of an export once the archive knows
// where the export goes: archivedAs is its place relative to the drop
// folder ("failed/employees.csv"), which the reports name. The archive
// step calls it just before it writes them and moves the export.
type RenderReports func(archivedAs string) ([]ReportFile, error)

// Empty writes nothing: the content of a marker file.
func Empty(io.Writer) error { return nil }
