// Package reports renders what HR admins read beside an archived export:
// the rejects CSV (the rejected rows with their own values, to fix and drop
// again) and the one-page HTML summary of a run. The JSON report is the
// run's report as the job encodes it; this package only names its file.
package reports

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
// with a byte order mark, CRLF record ends), with the export's delimiter
// (0 is a comma): the line, column and reason columns, then the export's
// header and each row's values, one row per rejected line. Each cell is
// neutralized (Neutralize) and otherwise kept byte for byte: a line break
// inside a value (LF, CRLF or a lone CR) stays as the export had it, in a
// quoted field (encoding/csv's writer with UseCRLF would drop a lone CR
// and turn LF into CRLF). A row with more values than the header keeps
// them; one with fewer is padded.
func RejectsCSV(header []string, rows []RejectedRow, delim rune) ([]byte, error) {
	if delim == 0 {
		delim = ','
	}
	if delim == '"' || delim == '\r' || delim == '\n' || !utf8.ValidRune(delim) {
		return nil, fmt.Errorf("write rejects: invalid delimiter %q", delim)
	}
	var buf bytes.Buffer
	buf.WriteString(bom)
	head := append([]string{LineColumn, ColumnColumn, ReasonColumn}, header...)
	writeRecord(&buf, neutralizeAll(head), delim)
	for _, r := range rows {
		values := r.Values
		if len(values) < len(header) {
			values = append(append([]string(nil), values...), make([]string, len(header)-len(values))...)
		}
		rec := append([]string{strconv.Itoa(r.Line), strings.Join(r.Columns, "; "), strings.Join(r.Reasons, "; ")}, values...)
		writeRecord(&buf, neutralizeAll(rec), delim)
	}
	return buf.Bytes(), nil
}

// writeRecord writes one record ended by CRLF: a field that holds the
// delimiter, a quote, a line break or starts with a space is quoted (its
// quotes doubled), any other is written as it is; no byte of a field is
// changed.
func writeRecord(buf *bytes.Buffer, rec []string, delim rune) {
	for i, field := range rec {
		if i > 0 {
			buf.WriteRune(delim)
		}
		if !needsQuotes(field, delim) {
			buf.WriteString(field)
			continue
		}
		buf.WriteByte('"')
		buf.WriteString(strings.ReplaceAll(field, `"`, `""`))
		buf.WriteByte('"')
	}
	buf.WriteString("\r\n")
}

// needsQuotes tells whether a field must be quoted to be read back as it
// is: as encoding/csv's writer decides, for the same reasons.
func needsQuotes(field string, delim rune) bool {
	if field == "" {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(field); field == `\.` || unicode.IsSpace(r) {
		return true
	}
	return strings.ContainsRune(field, delim) || strings.ContainsAny(field, "\"\r\n")
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
