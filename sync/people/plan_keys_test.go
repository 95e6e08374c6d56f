package people

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/sync/sender"
)

// TestDuplicateEmailsAgainstState checks that a duplicate e-mail of the
// export is found whichever way its rows reach their slot: the e-mail its
// own state entry has, another active person's, an e-mail two active
// people of state share, a departed person's, or one state does not know;
// from the scanned state and from the snapshot.
func TestDuplicateEmailsAgainstState(t *testing.T) {
	eachStore(t, func(t *testing.T, ts testStore) {
		const tenant = "dups"
		ps := statePeople(40) // every tenth (5, 15, ...) departed, every seventh (3, 10, ...) not created
		// Two active people of state share an e-mail (state is not clean).
		ps[21].Email = ps[20].Email
		seedState(t, ts.st, tenant, ps)

		next := slices.Clone(ps)
		extra := func(id, email string) {
			next = append(next, model.Person{ExternalID: id, Email: email, FirstName: "A", LastName: "B", Department: "Eng",
				StartDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
		}
		extra("N1", ps[1].Email)      // line 42: a new person with an unchanged person's e-mail (line 3)
		extra("N2", "fresh@x.io")     // line 43: an e-mail state does not know...
		extra("N3", "fresh@x.io")     // line 44: ...twice
		extra("N4", ps[5].Email)      // line 45: a departed person's e-mail (line 7 is that person)
		extra("N5", "FRESH@x.io ")    // line 46: the same unknown e-mail, written otherwise
		next[30].Email = ps[31].Email // line 32 takes the e-mail of line 33's person, who keeps it
		// ps[20] and ps[21] (lines 22 and 23) share an e-mail in state and in the export.

		want := map[int]string{
			3: "also on line 42", 42: "first on line 3",
			43: "also on line 44 and 1 more", 44: "first on line 43", 46: "first on line 43",
			7: "also on line 45", 45: "first on line 7",
			32: "also on line 33", 33: "first on line 32",
			22: "also on line 23", 23: "first on line 22",
		}
		job, err := New(Options{Tenant: tenant, CollectionID: "c", Safeguards: Safeguards{MaxDepartedRatio: 1, MaxRejectedRatio: 1}}, ts.st, sender.NewJournal(ts.st), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		export := writeExport(t, "next.csv", next)
		check := func(t *testing.T, from string) {
			t.Helper()
			p, err := job.BuildPlan(t.Context(), export)
			if err != nil {
				t.Fatal(err)
			}
			if p.StateFrom != from {
				t.Fatalf("state from %q, want %q", p.StateFrom, from)
			}
			got := map[int]string{}
			for _, r := range p.Rejections {
				if r.Field != "email" || !strings.HasPrefix(r.Reason, "duplicate e-mail: ") {
					t.Errorf("line %d: unexpected rejection %s: %s", r.Line, r.Field, r.Reason)
					continue
				}
				reason := strings.TrimPrefix(r.Reason, "duplicate e-mail: ")
				reason, _, _ = strings.Cut(reason, " line(s)")
				reason, _, _ = strings.Cut(reason, ";")
				got[r.Line] = reason
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("duplicate e-mails:\n got %v\nwant %v", got, want)
			}
			if p.Stats.Rejected != len(want) || p.Stats.Accepted != len(next)-len(want) {
				t.Errorf("stats = %+v", p.Stats)
			}
		}
		t.Run("scan", func(t *testing.T) { check(t, stateFromScan) })
		saveSnapshot(t, ts.st, tenant)
		t.Run("snapshot", func(t *testing.T) { check(t, stateFromSnapshot) })
	})
}
