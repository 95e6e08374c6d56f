package sources

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"hrsync/model"
)

// TestRunMatchesTwoPassReference checks the one-pass Run against the
// plain definition on random exports full of duplicates: a key held by
// several rows rejects each of them, the first naming the second and how
// many more, the others naming the first; every other check is the row's
// own. Batches of every size are tried, so duplicates cross batches.
func TestRunMatchesTwoPassReference(t *testing.T) {
	m := baseMapping()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(300)
		rows := make([]Row, 0, n)
		line := 1
		for range n {
			line += 1 + rng.IntN(2) // a quoted line break now and then
			r := row(line, fmt.Sprintf("E%d", rng.IntN(n)), fmt.Sprintf("p%d@x.io", rng.IntN(n)))
			switch rng.IntN(12) {
			case 0:
				r.Text[AddBalance] = "-3" // a bad field
			case 1:
				r = Row{Line: line, Problem: "malformed"}
			case 2:
				r = Row{Line: line, Blank: true}
			case 3:
				r.Text[Email] = "not an address"
			case 4:
				r.Text[ExternalID] = " " + r.Text[ExternalID] + " " // same key once trimmed
			}
			rows = append(rows, r)
		}
		wantPeople, wantRejs, wantStats := reference(t, m, rows)
		for _, size := range []int{1, 3, 64, BatchLen} {
			t.Run(fmt.Sprintf("seed %d, %d rows, batches of %d", seed, n, size), func(t *testing.T) {
				people, rejs, st, err := collect(t, m, &fakeReader{rows: rows, size: size})
				if err != nil {
					t.Fatal(err)
				}
				if st != wantStats {
					t.Errorf("stats = %+v, want %+v", st, wantStats)
				}
				if got := lines(people); !reflect.DeepEqual(got, lines(wantPeople)) {
					t.Errorf("accepted lines = %v, want %v", got, lines(wantPeople))
				}
				sortRejections(rejs)
				if !reflect.DeepEqual(rejs, wantRejs) {
					t.Errorf("rejections differ:\n got %v\nwant %v", rejs, wantRejs)
				}
			})
		}
	}
}

// reference applies the definition with two plain passes over rows.
func reference(t *testing.T, m Mapping, rows []Row) ([]model.Person, []model.Rejection, Stats) {
	t.Helper()
	v, err := NewValidator("src", m, testNow)
	if err != nil {
		t.Fatal(err)
	}
	linesOf := map[string][]int{}
	for i := range rows {
		if rows[i].Blank {
			continue
		}
		p, _ := v.Check(&rows[i])
		if p.ExternalID != "" {
			linesOf["id:"+p.ExternalID] = append(linesOf["id:"+p.ExternalID], rows[i].Line)
		}
		if p.Email != "" {
			linesOf["mail:"+p.Email] = append(linesOf["mail:"+p.Email], rows[i].Line)
		}
	}
	dup := func(key, what string, line int) string {
		at := linesOf[key]
		switch {
		case len(at) < 2:
			return ""
		case at[0] != line:
			return fmt.Sprintf("duplicate %s: first on line %d; every occurrence is rejected", what, at[0])
		case len(at) > 2:
			return fmt.Sprintf("duplicate %s: also on line %d and %d more line(s); every occurrence is rejected", what, at[1], len(at)-2)
		}
		return fmt.Sprintf("duplicate %s: also on line %d; every occurrence is rejected", what, at[1])
	}
	var (
		people []model.Person
		rejs   []model.Rejection
		st     Stats
	)
	for i := range rows {
		r := &rows[i]
		if r.Blank {
			st.Skipped++
			continue
		}
		st.Rows++
		p, own := v.Check(r)
		if p.ExternalID != "" {
			if reason := dup("id:"+p.ExternalID, "externalId", r.Line); reason != "" {
				own = append(own, model.Rejection{Source: "src", Line: r.Line, Field: "ID", Reason: reason})
			}
		}
		if p.Email != "" {
			if reason := dup("mail:"+p.Email, "e-mail", r.Line); reason != "" {
				own = append(own, model.Rejection{Source: "src", Line: r.Line, Field: "Mail", Reason: reason})
			}
		}
		if len(own) == 0 {
			st.Accepted++
			people = append(people, p)
			continue
		}
		st.Rejected++
		rejs = append(rejs, own...)
	}
	sortRejections(rejs)
	return people, rejs, st
}

func sortRejections(rejs []model.Rejection) {
	slices.SortFunc(rejs, func(a, b model.Rejection) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Reason, b.Reason))
	})
}

func lines(people []model.Person) []int {
	out := []int{}
	for _, p := range people {
		out = append(out, p.Line)
	}
	return out
}

// TestRunAcceptForms checks that the three forms of Handler's accept see
// the same rows, in the same order, and the two hashed ones the hashes of
// each row.
func TestRunAcceptForms(t *testing.T) {
	m := baseMapping()
	v, err := NewValidator("src", m, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for i := range 2000 {
		rows = append(rows, row(i+2, fmt.Sprintf("E%d", i%1500), fmt.Sprintf("p%d@x.io", i)))
	}
	type got struct {
		p model.Person
		h Hashes
	}
	run := func(h Handler, out *[]got) {
		t.Helper()
		h.Reject = func(model.Rejection) error { return nil }
		if _, err := Run(t.Context(), v, &fakeReader{rows: rows, size: 64}, h); err != nil {
			t.Fatal(err)
		}
		if len(*out) == 0 {
			t.Fatal("no row accepted")
		}
	}
	var plain, hashed, byRow []got
	run(Handler{Accept: func(p model.Person) error { plain = append(plain, got{p, hashesOf(&p, true)}); return nil }}, &plain)
	run(Handler{Accept: func(model.Person) error { return errors.New("Accept called") },
		AcceptHashed: func(p model.Person, h Hashes) error { hashed = append(hashed, got{p, h}); return nil }}, &hashed)
	run(Handler{Accept: func(model.Person) error { return errors.New("Accept called") },
		AcceptHashed: func(model.Person, Hashes) error { return errors.New("AcceptHashed called") },
		AcceptRow:    func(p *model.Person, h Hashes) error { byRow = append(byRow, got{*p, h}); return nil }}, &byRow)
	if !reflect.DeepEqual(hashed, plain) || !reflect.DeepEqual(byRow, plain) {
		t.Fatalf("the accept forms differ: %d, %d and %d rows", len(plain), len(hashed), len(byRow))
	}
}
