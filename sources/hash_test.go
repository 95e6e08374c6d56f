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
