package model

import "testing"

// TestRejectedRows checks that rejections group by row, in order, one
// line per row with every problem, and that a rejection without a line is
// a row of its own.
func TestRejectedRows(t *testing.T) {
	rs := []Rejection{
		{Source: "a.csv", Line: 3, Field: "email", Reason: "bad"},
		{Source: "a.csv", Line: 3, Field: "startDate", Reason: "worse"},
		{Source: "a.csv", Line: 5, Reason: "too many columns"},
		{Source: "b.csv", Line: 3, Field: "email", Reason: "bad"},
		{Source: "sql:acme", Reason: "no key"},
		{Source: "sql:acme", Reason: "no key"},
	}
	rows := RejectedRows(rs)
	want := []string{"a.csv:3: email: bad; startDate: worse", "a.csv:5: too many columns", "b.csv:3: email: bad",
		"sql:acme:0: no key", "sql:acme:0: no key"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want), rows)
	}
	for i, row := range rows {
		if got := RowProblems(row); got != want[i] {
			t.Errorf("row %d: %q, want %q", i, got, want[i])
		}
	}
}
