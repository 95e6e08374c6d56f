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
	// State keeps fingerprints: a change of this value marks everyone as
	// changed after an upgrade. It must never move. (Computed with the
	// first release's code, which formatted the dates with time.AppendFormat.)
	bal := 5.0
	p := model.Person{ExternalID: "E01", Email: "a@x.io", FirstName: "Åsa", LastName: "B", Department: "D", Location: "L",
		StartDate: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), BirthDate: time.Date(1980, 3, 4, 0, 0, 0, 0, time.UTC), AddBalance: &bal}
	if got := Fingerprint(p); got != 0xf4df0eb73be81e1e { // the value of hrsync's first release
		t.Errorf("Fingerprint = %#x", got)
	}
}
