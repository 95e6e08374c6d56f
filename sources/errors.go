package sources

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"hrsync/model"
)

// ColumnsError is a file-level error: configured columns that an export's
// header (CSV) or result set (SQL) lacks, or holds twice.
type ColumnsError struct {
	Source     string
	Missing    []string // configured column names not found
	Duplicated []string // configured column names found more than once
	// Found are the columns the export has, in order, as FoundColumns
	// shows them: at most MaxFoundColumns, each cut and masked.
	Found []string
}

// Error names the missing and duplicated columns and lists those found.
func (e *ColumnsError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	b.WriteString(":")
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, " missing column(s) %s;", quoteList(e.Missing))
	}
	if len(e.Duplicated) > 0 {
		fmt.Fprintf(&b, " column(s) found more than once %s;", quoteList(e.Duplicated))
	}
	fmt.Fprintf(&b, " found: %s", quoteList(FoundColumns(e.Found)))
	return b.String()
}

// MaxFoundColumns bounds the columns a ColumnsError lists.
const MaxFoundColumns = 30

// maxHeaderRunes bounds each column name a ColumnsError lists.
const maxHeaderRunes = 40

// FoundColumns makes the header of an export fit for a message: at most
// MaxFoundColumns names (then "… N more"), each cut at 40 characters, and
// a name that looks like an e-mail address or a date masked (a file
// without a header row has a person in its first line).
func FoundColumns(head []string) []string {
	n := min(len(head), MaxFoundColumns)
	out := make([]string, 0, n+1)
	for _, h := range head[:n] {
		out = append(out, maskHeader(strings.TrimSpace(strings.Trim(h, "\ufeff"))))
	}
	if len(head) > n {
		out = append(out, fmt.Sprintf("… %d more", len(head)-n))
	}
	return out
}

// maskHeader cuts a column name and masks it when it looks like an e-mail
// or a date.
func maskHeader(h string) string {
	if strings.HasPrefix(h, "… ") && strings.HasSuffix(h, " more") {
		return h // already made fit
	}
	switch {
	case strings.Contains(h, "@"):
		return model.MaskEmail(h)
	case countDigits(h) >= 4:
		return model.MaskDate(h)
	}
	return cutRunes(h, maxHeaderRunes)
}

func countDigits(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// MaxQuoted is the most characters of a value any message quotes.
const MaxQuoted = 200

// cutRunes cuts s to at most n characters, marking the cut with "…".
func cutRunes(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "…"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(cutRunes(n, MaxQuoted))
	}
	return strings.Join(q, ", ")
}

// RecordProblem is what is wrong with a record that a RecordError reports.
type RecordProblem int

// The problems of RecordError.
const (
	// RecordTooManyLines is a record that runs over its lines: a quoted
	// field that spans more lines than allowed.
	RecordTooManyLines RecordProblem = iota + 1
	// RecordTooLong is a record that runs over its bytes.
	RecordTooLong
	// RecordUnclosed is a quoted field still open at the end of the file.
	RecordUnclosed
)

// RecordError is a file-level error of a CSV export: a record that runs
// over the configured lines or bytes, or a quote that never closes. Most
// often a stray quote has swallowed the rows after it; reading on would
// turn them into one rejected row and mark their people departed, so the
// whole export is refused.
type RecordError struct {
	Source string
	// Line is the line the record starts on.
	Line int
	// QuoteLine is the line the quoted field that was still open started
	// on; 0 when the record ran over outside quotes.
	QuoteLine int
	Problem   RecordProblem
	MaxLines  int // the configured maxRecordLines
	MaxBytes  int // the configured maxRecordBytes
}

// Error names the line to look at and the limit; it quotes nothing of the
// record.
func (e *RecordError) Error() string {
	at := e.Line
	what := fmt.Sprintf("the row starting on line %d", e.Line)
	if e.QuoteLine > 0 {
		at = e.QuoteLine
		what = fmt.Sprintf("a quoted field opened on line %d", e.QuoteLine)
	}
	var msg string
	switch e.Problem {
	case RecordTooManyLines:
		msg = fmt.Sprintf("%s runs over %d lines (csv.maxRecordLines)", what, e.MaxLines)
	case RecordTooLong:
		msg = fmt.Sprintf("%s runs over %d bytes (csv.maxRecordBytes)", what, e.MaxBytes)
	default:
		msg = what + " is never closed"
	}
	if e.QuoteLine > 0 {
		msg += "; a stray quote there would swallow the rows after it"
	}
	return fmt.Sprintf("%s:%d: %s; the export was not read", e.Source, at, msg)
}

// IsFileError tells whether err concerns an export as a whole, such that
// none of it can be used and the export goes to failed/ with its report:
// a *ColumnsError, a *RecordError or ErrChanged.
func IsFileError(err error) bool {
	var cols *ColumnsError
	var rec *RecordError
	return errors.As(err, &cols) || errors.As(err, &rec) || errors.Is(err, ErrChanged)
}
