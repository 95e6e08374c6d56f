package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"slices"
	"time"
)

// Summary is what the HTML report of one export says. Every text in it is
// already safe to show an HR admin: reasons quote values masked, people
// are named by externalId only.
type Summary struct {
	Tenant  string
	Source  string
	RunID   string
	Outcome string
	// Cause is what happened, Next the exact next step (empty: nothing to do).
	Cause string
	Next  string
	// Counts are the run's counts by name.
	Counts map[string]int
	// Stops are the safeguards that stopped (or, overridden, would have
	// stopped) the run, and Override the command that runs the export once
	// past them (empty when none applies).
	Stops    []string
	Override string
	// Rejections are the problems of the rejected rows (a row may have
	// several): line, column and reason. The report counts the rows.
	Rejections []Rejection
	// Held are the externalIds of the people whose grant waits for an
	// operator's decision.
	Held []string
	// Approval, when not nil, says the export ran because an HR admin
	// approved it after a safeguard stop.
	Approval *Approval
	// RejectsFile names the rejects CSV beside the report; empty when none.
	RejectsFile string
	// Generated is when the report was written.
	Generated time.Time
}

// Rejection is one problem of a rejected row of the HTML report.
type Rejection struct {
	Line   int
	Column string
	Reason string
}

// summaryText is the page's template.
//
//go:embed summary.html.tmpl
var summaryText string

// count is one count of the report, in a stable order.
type count struct {
	Name  string
	Value int
}

// HTML renders the one-page summary: inline CSS, no script, no external
// asset. Counts of zero are left out.
func HTML(s Summary) ([]byte, error) {
	names := make([]string, 0, len(s.Counts))
	for k := range s.Counts {
		names = append(names, k)
	}
	slices.Sort(names)
	counts := make([]count, 0, len(names))
	for _, k := range names {
		if s.Counts[k] != 0 {
			counts = append(counts, count{k, s.Counts[k]})
		}
	}
	tmpl, err := template.New("summary").Parse(summaryText)
	if err != nil {
		return nil, fmt.Errorf("parse the html report's template: %w", err)
	}
	var buf bytes.Buffer
	err = tmpl.Execute(&buf, struct {
		Summary
		RejectedRows int
		CountList    []count
		Tone         string
		When         string
	}{s, rejectedRows(s.Rejections), counts, tone(s.Outcome), s.Generated.UTC().Format("2006-01-02 15:04 UTC")})
	if err != nil {
		return nil, fmt.Errorf("render the html report: %w", err)
	}
	return buf.Bytes(), nil
}

// rejectedRows counts the rows of an export's rejections: the lines they
// name (a problem without a line is a row of its own).
func rejectedRows(rs []Rejection) int {
	lines := map[int]bool{}
	n := 0
	for _, r := range rs {
		if r.Line > 0 && lines[r.Line] {
			continue
		}
		lines[r.Line] = true
		n++
	}
	return n
}

// tone is the colour class of an outcome.
func tone(outcome string) string {
	switch outcome {
	case "ok":
		return "ok"
	case "attention", "safeguard":
		return "warn"
	}
	return "bad"
}
