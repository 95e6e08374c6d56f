package sources

import (
	"testing"
	"time"

	"hrsync/model"
)

func TestAppendDateMatchesFormat(t *testing.T) {
	for _, d := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(1900, 2, 28, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 6, 7, 0, 0, 0, 0, time.UTC),
	} {
		if got, want := string(appendDate(nil, d)), d.Format(model.DateLayout); got != want {
			t.Errorf("appendDate = %q, want %q", got, want)
		}
	}
	for day := time.Date(1899, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() < 2101; day = day.AddDate(0, 0, 1) {
		if got, want := string(appendDate(nil, day)), day.Format(model.DateLayout); got != want {
			t.Fatalf("appendDate = %q, want %q", got, want)
		}
	}
}

func TestFingerprintIsStable(t *testing.T) {
	// Fingerprints are stored in state: a change of the function would
	// make every person look changed. These values come from the first
	// implementation (xxhash.Digest fed field by field, dates formatted
	// with time.AppendFormat).
	full := model.Person{ExternalID: "E001", Email: "ana@example.com", FirstName: "Ana", LastName: "Lima",
		Department: "Ops", Location: "Montréal",
		StartDate: time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), BirthDate: time.Date(1990, 12, 31, 0, 0, 0, 0, time.UTC)}
	noBirth := full
	noBirth.BirthDate = time.Time{}
	for _, tt := range []struct {
		name string
		p    model.Person
		want uint64
	}{
		{"every field", full, 0x8e7f0d8985e001b8},
		{"keys only", model.Person{ExternalID: "0042", Email: "bo@example.com"}, 0x9e5fd1ec1c782758},
		{"no birth date", noBirth, 0xf969a7508d1e9d98},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fingerprint(tt.p); got != tt.want {
				t.Fatalf("Fingerprint = %#x, want %#x", got, tt.want)
			}
		})
	}
	t.Run("line and balance take no part", func(t *testing.T) {
		other := full
		other.Line = 99
		b := 12.5
		other.AddBalance = &b
		if Fingerprint(other) != Fingerprint(full) {
			t.Fatal("fingerprint moved with the line or the balance")
		}
	})
}

// TestBirthdayWithoutYear: a birth date given as "--MM-DD" (what a SCIM
// directory keeps) is read as a birthday without its year, never as a
// made-up date; it takes part in the fingerprint, and a person without one
// keeps the fingerprint they always had. A bad one is rejected.
func TestBirthdayWithoutYear(t *testing.T) {
	cols := map[string]string{}
	for _, f := range []string{"externalId", "email", "firstName", "lastName", "birthDate"} {
		cols[f] = f
	}
	v, err := NewValidator("scim:acme@1", Mapping{Columns: cols}, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	row := func(birth string) Row {
		r := Row{Line: 1}
		r.Text[ExternalID], r.Text[Email], r.Text[FirstName], r.Text[LastName] = "E1", "a@example.com", "A", "B"
		r.Text[BirthDate] = birth
		return r
	}
	r := row("--02-29")
	p, rej := v.Check(&r)
	if len(rej) > 0 || !p.BirthDate.IsZero() || p.BirthMonth != time.February || p.BirthDay != 29 {
		t.Fatalf("--02-29: person %+v, rejections %v; want the birthday February 29 and no birth date", p, rej)
	}
	if m, d, ok := p.Birthday(); !ok || m != time.February || d != 29 {
		t.Fatalf("Birthday() = %v %d %v", m, d, ok)
	}
	none := p
	none.BirthMonth, none.BirthDay = 0, 0
	if Fingerprint(p) == Fingerprint(none) {
		t.Fatal("a birthday without its year takes no part in the fingerprint")
	}
	if got, want := Fingerprint(model.Person{ExternalID: "0042", Email: "bo@example.com"}), uint64(0x9e5fd1ec1c782758); got != want {
		t.Fatalf("fingerprint without a birthday moved: %#x, want %#x", got, want)
	}
	for _, bad := range []string{"--02-30", "--13-01", "-12-25"} {
		r := row(bad)
		if _, rej := v.Check(&r); len(rej) != 1 || rej[0].Field != "birthDate" {
			t.Fatalf("%s: rejections %v; want one on birthDate", bad, rej)
		}
	}
}
