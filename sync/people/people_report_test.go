package people

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"hrsync/internal/reports"
	"hrsync/sync/sender"
)

// TestAddedList: the people added read back in order, as they were
// added, across many slabs, with a record larger than a slab, and a read
// stopped early stops.
func TestAddedList(t *testing.T) {
	var want []reports.Person
	for i := range 60000 {
		p := reports.Person{ExternalID: fmt.Sprintf("E%07d", i), Email: "e***@e***.test", Granted: float64(i) / 4}
		if i == 30000 {
			p.Email = strings.Repeat("x", slabSize+10) // a record of its own slab
		}
		if i%7 == 0 {
			p.Email, p.Granted = "", 0
		}
		want = append(want, p)
	}
	var l addedList
	for _, p := range want {
		l.add(p)
	}
	if l.n != len(want) || len(l.slabs) < 3 {
		t.Fatalf("%d people in %d slabs, want %d in several", l.n, len(l.slabs), len(want))
	}
	i := 0
	for p := range l.all {
		if p != want[i] {
			t.Fatalf("person %d: %+v, want %+v", i, p, want[i])
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("read %d people back, want %d", i, len(want))
	}
	list := reports.ListFunc(l.n, l.all)
	if first := list.First(2); len(first) != 2 || first[1] != want[1] {
		t.Errorf("First(2) = %v", first)
	}
}

// TestUnchangedSampleOutlivesTheRead: the people a plan names as already
// there are the export's, read back after the whole export was read. The
// CSV reader lends each row's strings for the AcceptRow call only, and
// reuses its buffers once a batch is handed on: an export of many batches
// would overwrite a sample that kept them.
func TestUnchangedSampleOutlivesTheRead(t *testing.T) {
	eachStore(t, func(t *testing.T, ts testStore) {
		const tenant = "acme"
		ps := statePeople(20_000)
		seedState(t, ts.st, tenant, ps)
		job, err := New(Options{Tenant: tenant, CollectionID: "c"}, ts.st, sender.NewJournal(ts.st), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := job.BuildPlan(t.Context(), writeExport(t, "next.csv", ps))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i, p := range ps {
			if i%7 != 3 && i%10 != 5 && len(want) < reports.MaxListed { // created and active: unchanged
				want = append(want, p.ExternalID)
			}
		}
		var got []string
		for _, p := range peopleReport(plan, nil, nil).AlreadyThere {
			got = append(got, p.ExternalID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("already there: %q\nwant %q", got, want)
		}
	})
}
