package sources

import (
	"fmt"
	"testing"
	"time"
)

// benchCheckRows are rows like those of a generated export: ASCII keys and
// names, a city with an accent in one row of four, ISO dates.
func benchCheckRows(n int) []Row {
	cities := []string{"Montréal", "Berlin", "Lisbon", "Osaka"}
	rows := make([]Row, n)
	for i := range rows {
		r := &rows[i]
		r.Line = i + 2
		r.Text[ExternalID] = fmt.Sprintf("E%08d", i+1)
		r.Text[Email] = fmt.Sprintf("pim.vantongeren.e%08d@example.com", i+1)
		r.Text[FirstName] = "Pim"
		r.Text[LastName] = "Vantongeren"
		r.Text[Department] = "Operations"
		r.Text[Location] = cities[i%len(cities)]
		r.Text[StartDate] = fmt.Sprintf("20%02d-%02d-%02d", 10+i%14, 1+i%12, 1+i%28)
		r.Text[BirthDate] = fmt.Sprintf("19%02d-%02d-%02d", 60+i%35, 1+i%12, 1+i%28)
		if i%10 == 0 {
			r.Text[AddBalance] = "12.5"
		}
	}
	return rows
}

// BenchmarkCheck measures Validator.Check and the hashes of the checked
// rows, the per-row work of Run's workers after the parse.
func BenchmarkCheck(b *testing.B) {
	cols := map[string]string{}
	for _, name := range FieldNames() {
		cols[name] = name
	}
	v, err := NewValidator("bench.csv", Mapping{Columns: cols}.WithDefaults(), time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	rows := benchCheckRows(4096)
	b.ReportAllocs()
	for b.Loop() {
		for i := range rows {
			p, rej := v.Check(&rows[i])
			if len(rej) != 0 {
				b.Fatalf("row %d rejected: %v", i, rej)
			}
			_ = hashesOf(&p, true)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}
