package gen_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"hrsync/internal/bench/gen"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/csvsrc"
)

// defaultOptions maps every field under its own name, as hrsync's
// configuration does by default.
func defaultOptions() sources.CSVOptions {
	cols := map[string]string{}
	for _, name := range sources.FieldNames() {
		cols[name] = name
	}
	return sources.CSVOptions{Mapping: sources.Mapping{Columns: cols}}
}

func readBack(t *testing.T, data []byte) ([]model.Person, sources.Stats) {
	t.Helper()
	var got []model.Person
	st, err := csvsrc.Read(context.Background(), "gen.csv", bytes.NewReader(data), defaultOptions(), sources.Handler{
		Accept: func(p model.Person) error { got = append(got, p); return nil },
		Reject: func(r model.Rejection) error { t.Errorf("rejected: %s", r.Error()); return nil },
	})
	if err != nil {
		t.Fatalf("read generated csv: %v", err)
	}
	return got, st
}

func TestPerson(t *testing.T) {
	t.Run("deterministic", func(t *testing.T) {
		for _, i := range []int{0, 1, 999, 123456} {
			a, b := gen.Person(i), gen.Person(i)
			if sources.Fingerprint(a) != sources.Fingerprint(b) || a.ExternalID != b.ExternalID {
				t.Errorf("person %d differs between two calls", i)
			}
		}
	})
	t.Run("unique ids and e-mails", func(t *testing.T) {
		ids, emails := map[string]bool{}, map[string]bool{}
		for p := range gen.Previous(20000) {
			if ids[p.ExternalID] || emails[p.Email] {
				t.Fatalf("duplicate key at %s", p.ExternalID)
			}
			ids[p.ExternalID], emails[p.Email] = true, true
		}
	})
	t.Run("change alters the fingerprint only", func(t *testing.T) {
		p := gen.Person(42)
		c := gen.Change(p)
		if sources.Fingerprint(p) == sources.Fingerprint(c) {
			t.Error("changed person has the same fingerprint")
		}
		if c.ExternalID != p.ExternalID || c.Email != p.Email {
			t.Error("change touched the keys")
		}
	})
}

func TestWriteCSV(t *testing.T) {
	t.Run("hrsync reads every row back with the same fingerprint", func(t *testing.T) {
		const n = 3000
		var buf bytes.Buffer
		written, err := gen.WriteCSV(&buf, gen.Previous(n))
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		if written != n {
			t.Fatalf("wrote %d rows, want %d", written, n)
		}
		got, st := readBack(t, buf.Bytes())
		if st.Rows != n || st.Accepted != n || st.Rejected != 0 {
			t.Fatalf("stats = %+v, want %d rows all accepted", st, n)
		}
		for i, p := range got {
			want := gen.Person(i)
			if p.ExternalID != want.ExternalID {
				t.Fatalf("row %d: externalId %s, want %s", i, p.ExternalID, want.ExternalID)
			}
			if sources.Fingerprint(p) != sources.Fingerprint(want) {
				t.Fatalf("row %d (%s): fingerprint of the file differs from the generator's", i, p.ExternalID)
			}
			if (p.AddBalance == nil) != (want.AddBalance == nil) || (p.AddBalance != nil && *p.AddBalance != *want.AddBalance) {
				t.Fatalf("row %d (%s): addBalance differs", i, p.ExternalID)
			}
		}
	})
	t.Run("header is the default mapping", func(t *testing.T) {
		var buf bytes.Buffer
		if _, err := gen.WriteCSV(&buf, gen.Previous(0)); err != nil {
			t.Fatalf("write: %v", err)
		}
		if got, want := strings.TrimSpace(buf.String()), strings.Join(sources.FieldNames(), ","); got != want {
			t.Errorf("header = %q, want %q", got, want)
		}
	})
}

func TestDelta(t *testing.T) {
	const n = 10000
	d := gen.DefaultDelta(n)
	t.Run("expect counts", func(t *testing.T) {
		c := d.Expect(n)
		want := gen.Counts{Rows: 9950 + 100, Unchanged: 9950 - 100, Changed: 100, New: 100, Departed: 50}
		if c != want {
			t.Errorf("Expect = %+v, want %+v", c, want)
		}
	})
	t.Run("next export matches the counts", func(t *testing.T) {
		prev := map[string]uint64{}
		for p := range gen.Previous(n) {
			prev[p.ExternalID] = sources.Fingerprint(p)
		}
		var got gen.Counts
		for p := range d.Next(n) {
			got.Rows++
			fp, ok := prev[p.ExternalID]
			switch {
			case !ok:
				got.New++
			case fp != sources.Fingerprint(p):
				got.Changed++
			default:
				got.Unchanged++
			}
			delete(prev, p.ExternalID)
		}
		got.Departed = len(prev)
		if want := d.Expect(n); got != want {
			t.Errorf("diff of Next = %+v, want %+v", got, want)
		}
	})
	t.Run("zero delta repeats the previous export", func(t *testing.T) {
		var a, b bytes.Buffer
		if _, err := gen.WriteCSV(&a, gen.Previous(500)); err != nil {
			t.Fatal(err)
		}
		if _, err := gen.WriteCSV(&b, gen.Delta{}.Next(500)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Error("Next with a zero delta differs from Previous")
		}
	})
	t.Run("stops when the consumer stops", func(t *testing.T) {
		k := 0
		for range d.Next(n) {
			k++
			if k == 7 {
				break
			}
		}
		if k != 7 {
			t.Errorf("consumed %d", k)
		}
	})
}
