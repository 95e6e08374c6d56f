package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"time"
)

// Summary is what the HTML report of one export says, in an HR admin's
// words: what happened to people, not to calls. Every text in it is
// already safe to show an HR admin: reasons quote values masked, people
// are named by externalId and masked e-mail address only, and no text
// holds a command line, a path or an internal counter.
type Summary struct {
	Tenant  string
	Source  string
	RunID   string
	Outcome string
	// Cause is what happened when the lists below do not say it (an
	// export that could not be used), and Next the HR admin's next step
	// (empty: nothing to do).
	Cause string
	Next  string
	// Duplicate says the export's content was processed before: nothing
	// was done with it.
	Duplicate bool
	// People is what became of the export's people; after a safeguard
	// stop, what would have.
	People *People
	// Stops are the safeguards that stopped (or, overridden or approved,
	// would have stopped) the run, in plain words.
	Stops []string
	// Rejections are the problems of the rejected rows (a row may have
	// several): line, column and reason. The report counts the rows.
	Rejections []Rejection
	// Held are the externalIds of the people whose grant waits for
	// confirmation: the platform may have created them.
	Held []string
	// Approval, when not nil, says the export ran because an HR admin
	// approved it after a safeguard stop.
	Approval *Approval
	// Late, when not nil, says the export was archived by a later run than
	// the one that sent it.
	Late *Late
	// RejectsFile and JSONFile name the rejects CSV and the JSON report
	// beside this report; empty when none.
	RejectsFile string
	JSONFile    string
	// Generated is when the report was written.
	Generated time.Time
}

// Late says that the run which sent an export could not archive it, and
// a later run did, with the sending run's report.
type Late struct {
	// SentAt is when the sending run ended, and Cause why its archive
	// failed, in plain words.
	SentAt time.Time
	Cause  string
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

// page is what the template renders: the summary and the words made of it.
type page struct {
	Summary
	Tone     string
	When     string
	Headline string
	Sections []section
	// Approved and LateNote are the approval's and the late archive's
	// sentences; empty when none applies.
	Approved string
	LateNote string
}

// HTML renders the one-page summary: inline CSS, no script, no external
// asset. Sections with nobody in them are left out.
func HTML(s Summary) ([]byte, error) {
	tmpl, err := template.New("summary").Parse(summaryText)
	if err != nil {
		return nil, fmt.Errorf("parse the html report's template: %w", err)
	}
	p := page{Summary: s, Tone: tone(s.Outcome), When: stamp(s.Generated), Headline: Headline(s),
		Sections: sections(s), Approved: approvedNote(s.Approval), LateNote: lateNote(s.Late)}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("render the html report: %w", err)
	}
	return buf.Bytes(), nil
}

// stamp renders a time as the report shows it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

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

// approvedNote is the sentence that says an export ran because an HR
// admin approved it.
func approvedNote(a *Approval) string {
	if a == nil {
		return ""
	}
	s := "A safeguard had stopped this export; it was approved"
	if a.By != "" {
		s += " by " + a.By
	}
	if !a.At.IsZero() {
		s += " and taken on " + stamp(a.At)
	}
	return s + ", so it ran once past the safeguards."
}

// lateNote is the sentence that says an export was archived late.
func lateNote(l *Late) string {
	if l == nil {
		return ""
	}
	s := "Archived late: this export was sent to the platform"
	if !l.SentAt.IsZero() {
		s += " on " + stamp(l.SentAt)
	}
	s += ", but it could not be archived then"
	if l.Cause != "" {
		s += " (" + l.Cause + ")"
	}
	return s + ". This is the report of that run; a later run archived the export without sending anything again."
}
