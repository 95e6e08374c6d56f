package csvsrc

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"hrsync/model"
	"hrsync/sources"
)

// benchRows is the size of the generated export; HRSYNC_BENCH_ROWS
// overrides it (e.g. 1000000 to check by hand that memory stays flat).
func benchRows(b *testing.B) int {
	if s := os.Getenv("HRSYNC_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("HRSYNC_BENCH_ROWS=%q is not a row count", s)
		}
		return n
	}
	return 100_000
}

// writeBenchFile writes an export of n valid rows, some with quoted fields.
func writeBenchFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.csv")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	fmt.Fprintln(w, "Employee ID,Work Email,First Name,Last Name,Department,Hire Date,Birth Date,Balance")
	for i := range n {
		fmt.Fprintf(w, "%08d,person%d@example.com,First%d,\"Last, %d\",Dept %d,%02d/%02d/20%02d,%02d/%02d/19%02d,%d.50\n",
			i, i, i, i, i%50, i%12+1, i%28+1, i%20, (i+3)%12+1, (i+5)%28+1, 60+i%30, i%500)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadCSV reads the same generated file two ways in one process:
// "baseline" only parses it with encoding/csv, "read" is the full Read
// (encoding detection, two passes, gocsv mapping, validation). Compare
// their rows/s and B/op as a ratio.
func BenchmarkReadCSV(b *testing.B) {
	n := benchRows(b)
	path := writeBenchFile(b, n)
	o := sources.CSVOptions{Mapping: sources.Mapping{
		Columns: map[string]string{
			"externalId": "Employee ID", "email": "Work Email", "firstName": "First Name", "lastName": "Last Name",
			"department": "Department", "startDate": "Hire Date", "birthDate": "Birth Date", "addBalance": "Balance",
		},
		DateLayouts: map[string]string{"startDate": "01/02/2006", "birthDate": "01/02/2006"},
	}}
	report := func(b *testing.B) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}

	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			cr := csv.NewReader(bufio.NewReader(fh))
			cr.ReuseRecord = true
			rows := -1
			for {
				_, err := cr.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				rows++
			}
			_ = fh.Close()
			if rows != n {
				b.Fatalf("%d rows, want %d", rows, n)
			}
		}
		report(b)
	})

	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			accepted := 0
			st, err := Read(context.Background(), "bench.csv", fh, o, sources.Handler{
				Accept: func(model.Person) error { accepted++; return nil },
				Reject: func(r model.Rejection) error { return fmt.Errorf("unexpected rejection: %s", r.Error()) },
			})
			_ = fh.Close()
			if err != nil {
				b.Fatal(err)
			}
			if st.Accepted != n || accepted != n {
				b.Fatalf("accepted %d, want %d", st.Accepted, n)
			}
		}
		report(b)
	})
}
