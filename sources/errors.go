package sources

import (
	"fmt"
	"strings"
)

// ColumnsError is a file-level error: configured columns that an export's
// header (CSV) or result set (SQL) lacks, or holds twice.
type ColumnsError struct {
	Source     string
	Missing    []string // configured column names not found
	Duplicated []string // configured column names found more than once
	Found      []string // the columns the export has, in order
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
	fmt.Fprintf(&b, " found: %s", quoteList(e.Found))
	return b.String()
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
