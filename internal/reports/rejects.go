// Package reports renders what HR admins read beside an archived export:
// the rejects CSV (the rejected rows with their own values, to fix and drop
// again) and the one-page HTML summary of a run. The JSON report is the
// run's report as the job encodes it; this package only names its file.
package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"hrsync/sources"
)

// The suffixes of the report files written beside an archived export
// ("employees.csv.report.html").
const (
	JSONSuffix    = sources.ReportSuffix
	HTMLSuffix    = sources.HTMLReportSuffix
	RejectsSuffix = sources.RejectsSuffix
)

// The columns a rejects CSV puts before the export's own. Their names mark
// a file of corrections (sources.Stats.Corrections): dropped again, it creates and
// changes the people it lists and marks nobody departed.
const (
	LineColumn   = sources.CorrectionsColumn
	ColumnColumn = "hrsync column"
	ReasonColumn = "hrsync reason"
)

// bom is the UTF-8 byte order mark: with it, Excel opens the file as UTF-8.
const bom = "\uFEFF"

// RejectedRow is one rejected row of an export: its line, the columns and
// reasons of its problems, and its own values (nil when the row could not
// be parsed as CSV).
type RejectedRow struct {
	Line    int
	Columns []string
	Reasons []string
	Values  []string
}

// RejectsCSV renders the rejected rows as a CSV that Excel opens (UTF-8
// with a byte order mark, CRLF line ends), with the export's delimiter (0
// is a comma): the line, column and reason columns, then the export's
// header and each row's values, one row per rejected line. Each cell is
// neutralized (Neutralize). A row with more values than the header keeps
// them; one with fewer is padded.
func RejectsCSV(header []string, rows []RejectedRow, delim rune) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(bom)
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	if delim != 0 {
		w.Comma = delim
	}
	head := append([]string{LineColumn, ColumnColumn, ReasonColumn}, header...)
	if err := w.Write(neutralizeAll(head)); err != nil {
		return nil, fmt.Errorf("write rejects header: %w", err)
	}
	for _, r := range rows {
		values := r.Values
		if len(values) < len(header) {
			values = append(append([]string(nil), values...), make([]string, len(header)-len(values))...)
		}
		rec := append([]string{strconv.Itoa(r.Line), strings.Join(r.Columns, "; "), strings.Join(r.Reasons, "; ")}, values...)
		if err := w.Write(neutralizeAll(rec)); err != nil {
			return nil, fmt.Errorf("write rejected line %d: %w", r.Line, err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("write rejects: %w", err)
	}
	return buf.Bytes(), nil
}

// plainNumber matches a value that a spreadsheet can only read as a number
// or text, never as a formula calling a function or naming a cell: an
// optional sign, a digit, then digits, spaces and . , ( ) / - only (a
// negative balance "-25.50", a phone number "+49 30 1234-567").
var plainNumber = regexp.MustCompile(`^[+-]?[0-9][0-9 .,()/-]*$`)

// Neutralize defuses a cell a spreadsheet would read as a formula (OWASP's
// CSV injection guidance): a value that starts with =, +, -, @, a tab or a
// carriage return gets a single quote in front, so it shows as text. A
// plain number or phone number (plainNumber) is kept as it is: it cannot
// call anything, and quoting it would change a balance or a phone number
// the file is dropped again with.
func Neutralize(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || plainNumber.MatchString(s) {
		return s
	}
	return "'" + s
}

func neutralizeAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = Neutralize(s)
	}
	return out
}
