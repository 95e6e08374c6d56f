package people

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

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
		{ExternalID: "E5", Email: "e@x.io", BirthMonth: time.December, BirthDay: 25, AddBalance: &bal, Line: 4}, // a birthday without its year
	}
	hashes := make([]sources.Hashes, len(people))
	for i := range people {
		hashes[i] = sources.Hashes{ID: sources.KeyHash(people[i].ExternalID), Email: uint64(i), Fields: sources.Fingerprint(people[i])}
	}
	var l People
	// Enough copies to fill several slabs.
	const copies = 20000
	for range copies {
		for i, p := range people {
			l.Add(p, hashes[i])
		}
	}
	if l.Len() != copies*len(people) || len(l.slabs) < 2 {
		t.Fatalf("len %d in %d slabs; want %d in several", l.Len(), len(l.slabs), copies*len(people))
	}
	for i, p := range l.All() {
		if want := people[i%len(people)]; !reflect.DeepEqual(p, want) {
			t.Fatalf("person %d:\n got %+v\nwant %+v", i, p, want)
		}
		if _, h := l.hashedAt(i); h != hashes[i%len(people)] {
			t.Fatalf("hashes %d: got %+v, want %+v", i, h, hashes[i%len(people)])
		}
	}
	if got := l.Slice(len(people), len(people)+2); !reflect.DeepEqual(got, people[:2]) {
		t.Errorf("slice = %+v", got)
	}
	l.Filter(func(p model.Person, _ sources.Hashes) bool { return p.ExternalID == "E3" })
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
			l.Add(p, sources.Hashes{})
		}
		for _, q := range l.All() {
			if q.ExternalID == "" {
				b.Fatal(fmt.Sprint(q))
			}
		}
	}
}

func TestPeopleListFilterInPlace(t *testing.T) {
	person := func(i int) model.Person {
		p := model.Person{ExternalID: fmt.Sprintf("E%d", i), Email: fmt.Sprintf("p%d@x.io", i), Line: i + 2}
		switch i % 97 {
		case 0: // now and then a record larger than a slab
			p.Department = strings.Repeat("d", slabSize+i%13)
		case 1:
			p.Location = strings.Repeat("l", 3000)
		}
		return p
	}
	for _, keepEvery := range []int{1, 2, 3, 7, 1000, 1 << 30} {
		var l People
		const n = 30000
		for i := range n {
			l.Add(person(i), sources.Hashes{})
		}
		l.Filter(func(p model.Person, _ sources.Hashes) bool { return (p.Line-2)%keepEvery == 0 })
		want := 0
		for i := 0; i < n; i += keepEvery {
			if got := l.At(want); !reflect.DeepEqual(got, person(i)) {
				t.Fatalf("keep every %d: person %d is %.40q, want %.40q", keepEvery, want, got.ExternalID, person(i).ExternalID)
			}
			want++
		}
		if l.Len() != want {
			t.Fatalf("keep every %d: %d kept, want %d", keepEvery, l.Len(), want)
		}
		l.Add(person(5), sources.Hashes{}) // the list goes on after a filter
		if got := l.At(l.Len() - 1); !reflect.DeepEqual(got, person(5)) {
			t.Fatalf("keep every %d: added after the filter: %q", keepEvery, got.ExternalID)
		}
	}
}

// TestDecodePersonRefusesCutRecords decodes every prefix of a record:
// each is refused as cut short, and the whole record decodes to the person
// and the length written.
func TestDecodePersonRefusesCutRecords(t *testing.T) {
	bal := 3.5
	p := model.Person{ExternalID: "E42", Email: "åsa@x.io", FirstName: "Åsa", LastName: "Öberg", Department: "R&D",
		Location: "Malmö", StartDate: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), AddBalance: &bal, Line: 7,
		BirthMonth: time.March, BirthDay: 3}
	h := sources.Hashes{ID: 1, Email: 2, Fields: 3}
	rec := appendPerson(nil, p, h)
	for n := range len(rec) {
		if _, _, _, err := decodePerson(rec[:n]); err == nil {
			t.Fatalf("a record cut to %d of its %d bytes decoded", n, len(rec))
		}
	}
	got, gotH, n, err := decodePerson(append(rec, 0xFF, 0xFF)) // the next record's bytes follow
	if err != nil || n != len(rec) || gotH != h || !reflect.DeepEqual(got, p) {
		t.Fatalf("decodePerson = %+v, %+v, %d, %v; want %+v, %+v, %d", got, gotH, n, err, p, h, len(rec))
	}
}

// TestDecodePersonExternalIDApart checks that a decoded externalId does not
// share its memory with the person's other strings, which are copied out
// in one piece: a list that keeps the externalIds of many people (the
// plan's changed people, the birthdays a run records) must not keep the
// rest of each record alive.
func TestDecodePersonExternalIDApart(t *testing.T) {
	p := model.Person{ExternalID: "E42", Email: "a@x.io", FirstName: "Ann", LastName: "Lee", Department: "Ops", Location: "Oslo"}
	got, _, _, err := decodePerson(appendPerson(nil, p, sources.Hashes{}))
	if err != nil {
		t.Fatal(err)
	}
	id := uintptr(unsafe.Pointer(unsafe.StringData(got.ExternalID)))
	from := uintptr(unsafe.Pointer(unsafe.StringData(got.Email)))
	to := uintptr(unsafe.Pointer(unsafe.StringData(got.Location))) + uintptr(len(got.Location))
	if to-from != uintptr(len("a@x.io")+len("Ann")+len("Lee")+len("Ops")+len("Oslo")+4) { // and the four lengths between them
		t.Fatalf("the five other strings span %d bytes: not one piece", to-from)
	}
	// In one piece with them, the externalId would lie within it, or just
	// before the e-mail and its length.
	if id >= from && id < to || id+uintptr(len(got.ExternalID))+1 == from {
		t.Fatal("the externalId shares the memory of the other strings")
	}
}
