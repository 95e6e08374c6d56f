package people

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/sources"
)

func TestPeopleListRoundTrip(t *testing.T) {
	bal := 12.5
	zero := 0.0
	people := []model.Person{
		{ExternalID: "E1", Email: "a@x.io", FirstName: "Åsa", LastName: "Öberg", Department: "R&D", Location: "Malmö",
			StartDate: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), BirthDate: time.Date(1960, 2, 29, 0, 0, 0, 0, time.UTC),
			AddBalance: &bal, Line: 2},
		{ExternalID: "E2", Email: "b@x.io", Line: 3},                                                           // no dates, no balance
		{ExternalID: "E3", Email: "c@x.io", BirthDate: time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC), Line: 9}, // before 1970
		{ExternalID: "E4", AddBalance: &zero, Line: 1 << 40},
	}
	for i := range people {
		people[i].Hash = model.Hashes{ID: sources.KeyHash(people[i].ExternalID), Email: uint64(i), Fields: sources.Fingerprint(people[i])}
	}
	var l People
	// Enough copies to fill several slabs.
	const copies = 20000
	for range copies {
		for _, p := range people {
			l.Add(p)
		}
	}
	if l.Len() != copies*len(people) || len(l.slabs) < 2 {
		t.Fatalf("len %d in %d slabs; want %d in several", l.Len(), len(l.slabs), copies*len(people))
	}
	for i, p := range l.All() {
		if want := people[i%len(people)]; !reflect.DeepEqual(p, want) {
			t.Fatalf("person %d:\n got %+v\nwant %+v", i, p, want)
		}
	}
	if got := l.Slice(4, 6); !reflect.DeepEqual(got, people[:2]) {
		t.Errorf("slice = %+v", got)
	}
	l.Filter(func(p model.Person) bool { return p.ExternalID == "E3" })
	if l.Len() != copies || l.At(copies-1).Line != 9 {
		t.Errorf("filter kept %d", l.Len())
	}
}

func BenchmarkPeopleList(b *testing.B) {
	p := model.Person{ExternalID: "E0001234", Email: "first.last1234@example.com", FirstName: "First", LastName: "Last",
		Department: "Engineering", Location: "Berlin", StartDate: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)}
	for b.Loop() {
		var l People
		for i := range 10000 {
			p.Line = i
			l.Add(p)
		}
		for _, q := range l.All() {
			if q.ExternalID == "" {
				b.Fatal(fmt.Sprint(q))
			}
		}
	}
}
