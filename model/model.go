// Package model holds the domain types that several hrsync packages share:
// a person record read from an HR export, a rejected row, and a balance grant.
// It has no dependencies beyond the standard library; adapters depend on it,
// never the other way round.
package model

import (
	"fmt"
	"strings"
	"time"
)

// DateLayout is the layout hrsync uses for calendar dates it writes itself
// (state, reports, API requests).
const DateLayout = "2006-01-02"

// Person is one validated row of an HR export, normalized: trimmed strings,
// lower-cased e-mail, dates as UTC midnight. The zero time means "not given".
type Person struct {
	ExternalID string
	Email      string
	FirstName  string
	LastName   string
	Department string
	Location   string
	StartDate  time.Time
	BirthDate  time.Time
	// BirthMonth and BirthDay are the day of birth when only it is known
	// ("--MM-DD"): a SCIM directory keeps no year of birth (DESIGN.md,
	// invariant 5). Zero when not given; BirthDate, when set, wins. The
	// platform is never sent a birth date made up from them.
	BirthMonth time.Month
	BirthDay   int
	// AddBalance is the balance the export asks for; nil when the column is
	// absent or empty, so that a configured default can apply.
	AddBalance *float64
	// Line is the 1-based line (CSV) or row (SQL) the record came from.
	Line int
}

// Birthday is the month and day of birth, from BirthDate or else
// BirthMonth and BirthDay; ok is false when neither is known.
func (p Person) Birthday() (month time.Month, day int, ok bool) {
	if !p.BirthDate.IsZero() {
		return p.BirthDate.Month(), p.BirthDate.Day(), true
	}
	return p.BirthMonth, p.BirthDay, p.BirthMonth != 0
}

// ParseMonthDay reads a day of the year without its year, "--MM-DD" (the
// gMonthDay form of XML Schema); February 29 is a day. ok is false for
// anything else.
func ParseMonthDay(s string) (month time.Month, day int, ok bool) {
	if len(s) != 7 || s[0] != '-' || s[1] != '-' || s[4] != '-' {
		return 0, 0, false
	}
	t, err := time.Parse("2006-01-02", "2000"+s[1:]) // 2000 is a leap year
	if err != nil {
		return 0, 0, false
	}
	return t.Month(), t.Day(), true
}

// FormatMonthDay writes a day of the year as "--MM-DD".
func FormatMonthDay(month time.Month, day int) string {
	return fmt.Sprintf("--%02d-%02d", int(month), day)
}

// Rejection says why one row of an export was not accepted.
type Rejection struct {
	Source string `json:"source"` // file name or "sql:<tenant>"
	Line   int    `json:"line"`   // 1-based physical line of the row's start
	Field  string `json:"field"`  // the configured column name, or "" for the whole row
	Reason string `json:"reason"`
}

// Error renders the rejection as "file:line: field: reason".
func (r Rejection) Error() string {
	if r.Field == "" {
		return fmt.Sprintf("%s:%d: %s", r.Source, r.Line, r.Reason)
	}
	return fmt.Sprintf("%s:%d: %s: %s", r.Source, r.Line, r.Field, r.Reason)
}

// RejectedRows groups rejections by row (source and line), in the order
// of their first problem: one row of an export may have several problems,
// and every count of rejected rows counts the row once. A rejection
// without a line (0) is a row of its own.
func RejectedRows(rs []Rejection) [][]Rejection {
	var rows [][]Rejection
	at := map[string]int{}
	for _, r := range rs {
		key := fmt.Sprintf("%s\x00%d", r.Source, r.Line)
		if i, ok := at[key]; ok && r.Line > 0 {
			rows[i] = append(rows[i], r)
			continue
		}
		at[key] = len(rows)
		rows = append(rows, []Rejection{r})
	}
	return rows
}

// RowProblems renders one row's rejections as one line: "file:line:
// field: reason; field: reason".
func RowProblems(row []Rejection) string {
	if len(row) == 0 {
		return ""
	}
	parts := []string{row[0].Error()}
	for _, r := range row[1:] {
		if r.Field == "" {
			parts = append(parts, r.Reason)
			continue
		}
		parts = append(parts, r.Field+": "+r.Reason)
	}
	return strings.Join(parts, "; ")
}

// GrantState is where a balance grant is in the exactly-once protocol.
type GrantState string

// The states of a grant. Pending is written before the API call; the call's
// outcome moves it to Applied, NotApplied or Unknown. An operator may
// release an Unknown grant (resend it: back to Pending) or void it.
const (
	GrantPending    GrantState = "pending"     // intent committed, call not yet answered
	GrantApplied    GrantState = "applied"     // the platform confirmed it
	GrantNotApplied GrantState = "not_applied" // certainly not processed; safe to send again
	GrantUnknown    GrantState = "unknown"     // outcome unknown: held for an operator
	GrantVoided     GrantState = "voided"      // an operator decided it must never be sent
)

// Grant is one balance grant to one person, identified by a deterministic key.
type Grant struct {
	Key        string `json:"key"` // tenant/externalId/reason/occurrence
	Tenant     string `json:"tenant"`
	ExternalID string `json:"externalId"`
	// Job is the job that made the grant ("people", "grants"); with Reason,
	// the rule, it scopes which run may hold or resend it.
	Job        string     `json:"job"`
	Reason     string     `json:"reason"`
	Occurrence string     `json:"occurrence"`
	Amount     float64    `json:"amount"`
	State      GrantState `json:"state"`
	Attempts   int        `json:"attempts"`
	LastError  string     `json:"lastError"`
	// Note says why an operator or a job decided the grant's state (the
	// reason a grant was voided, released or confirmed); "" when none.
	Note string `json:"note"`
	// Day is the day a grants rule grants it (a calendar date of the
	// rules' time zone, UTC midnight), which a monthly budget counts it
	// in; zero for the people sync's grants. Written, not read back.
	Day       time.Time `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// InitialGrantReason is the reason of the people sync's initial balance
// grant unless a tenant's people.grantReason names another. It is reserved
// for the people sync: no grant rule may use it (nor the tenant's
// people.grantReason), so that the two jobs' grant keys never collide.
const InitialGrantReason = "initial"

// GrantKey builds the deterministic key of a grant.
func GrantKey(tenant, externalID, reason, occurrence string) string {
	return tenant + "/" + externalID + "/" + reason + "/" + occurrence
}
