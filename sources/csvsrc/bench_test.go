package csvsrc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"hrsync/internal/bench/gen"
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

// BenchmarkReadParallel reads a generated export of benchRows people
// (internal/bench/gen, 100,000 by default) sequentially and in parallel,
// and sequentially the existing way (readMode.slow), alternately, in each
// iteration, and reports the parallel read's time as a ratio to the
// sequential one's of the same iterations ("par/seq"), and each to the
// existing way's ("par/slow", "seq/slow"): run it
// with -cpu 1,2 for GOMAXPROCS 1 and 2. Each read starts after a garbage
// collection, and each mode goes first in half the iterations, so that
// neither pays for the other. "serial-par/seq" compares the part each
// read does in one goroutine, in order (Reader.Next), which bounds its
// speed however many processors it has.
func BenchmarkReadParallel(b *testing.B) {
	n := benchRows(b)
	var buf bytes.Buffer
	if _, err := gen.WriteCSV(&buf, gen.Previous(n)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	cols := map[string]string{}
	for _, name := range sources.FieldNames() {
		cols[name] = name
	}
	o := sources.CSVOptions{Mapping: sources.Mapping{Columns: cols}}
	var cpu []time.Duration // CPU time of each mode (the process's, during its reads)
	readOnce := func(mode readMode) time.Duration {
		runtime.GC() // neither read pays for the other's garbage
		cpuStart := cpuTime(b)
		start := time.Now()
		accepted := 0
		st, err := readWith(context.Background(), "gen.csv", bytes.NewReader(data), o, time.Now(), mode, sources.Handler{
			Accept: func(model.Person) error { accepted++; return nil },
			Reject: func(r model.Rejection) error { return fmt.Errorf("unexpected rejection: %s", r.Error()) },
		})
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		cpu[modeIndex(mode)] += cpuTime(b) - cpuStart
		if st.Accepted != n || accepted != n {
			b.Fatalf("accepted %d, want %d", st.Accepted, n)
		}
		return elapsed
	}
	// serialOnce times what one goroutine does in order, Reader.Next
	// alone: the bound of a read on many processors.
	serialOnce := func(mode readMode) time.Duration {
		runtime.GC()
		start := time.Now()
		rd, _, err := openReader("gen.csv", bytes.NewReader(data), o, mode)
		if err != nil {
			b.Fatal(err)
		}
		var batch sources.Batch
		for {
			err := rd.Next(context.Background(), &batch)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	// The existing way (readMode.slow, sequential: what read did on one or
	// two processors before the fast path) is timed too, each of the
	// three modes going first in a third of the iterations.
	modes := []readMode{{}, {parallel: true}, {slow: true}}
	took := make([]time.Duration, len(modes))
	cpu = make([]time.Duration, len(modes))
	var serialSeq, serialPar time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range modes {
			k := (i + j) % len(modes)
			took[k] += readOnce(modes[k])
		}
		serialSeq += serialOnce(readMode{})
		serialPar += serialOnce(readMode{parallel: true})
	}
	seq, par, slow := took[0], took[1], took[2]
	b.ReportMetric(float64(par)/float64(seq), "par/seq")
	b.ReportMetric(float64(par)/float64(slow), "par/slow")
	b.ReportMetric(float64(seq)/float64(slow), "seq/slow")
	b.ReportMetric(float64(cpu[1])/float64(cpu[2]), "par-cpu/slow")
	b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "seq-cpu/slow")
	b.ReportMetric(float64(serialPar)/float64(serialSeq), "serial-par/seq")
	b.ReportMetric(float64(seq.Milliseconds())/float64(b.N), "seq-ms/op")
	b.ReportMetric(float64(par.Milliseconds())/float64(b.N), "par-ms/op")
	b.ReportMetric(float64(slow.Milliseconds())/float64(b.N), "slow-ms/op")
}

// modeIndex is the index of mode in the modes of BenchmarkReadParallel.
func modeIndex(mode readMode) int {
	switch {
	case mode.slow:
		return 2
	case mode.parallel:
		return 1
	}
	return 0
}

// BenchmarkDetectEncoding checks a generated export (internal/bench/gen,
// HRSYNC_BENCH_ROWS rows, 100,000 by default) for UTF-8 as Detect does
// with encoding "auto": from the file, in sections by parallel jobs
// (validUTF8At), and in order through a reader that cannot read at an
// offset (validUTF8, the only way before), alternately in each iteration,
// each going first in half of them. It reports the parallel check's time
// as a ratio to the check in order ("par/seq"): run it with -cpu 1,2.
func BenchmarkDetectEncoding(b *testing.B) {
	path := filepath.Join(b.TempDir(), "gen.csv")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.WriteCSV(fh, gen.Previous(benchRows(b))); err != nil {
		b.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	detect := func(parallel bool) time.Duration {
		var r io.ReadSeeker = readSeekerOnly{f}
		if parallel {
			r = f
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		enc, err := detectEncoding(r)
		if err != nil || enc != sources.EncodingUTF8 {
			b.Fatalf("detectEncoding = %q, %v; want UTF-8", enc, err)
		}
		return time.Since(start)
	}
	var seq, par time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			seq += detect(false)
			par += detect(true)
		} else {
			par += detect(true)
			seq += detect(false)
		}
	}
	b.ReportMetric(float64(par)/float64(seq), "par/seq")
	b.ReportMetric(float64(seq.Microseconds())/1e3/float64(b.N), "seq-ms/op")
	b.ReportMetric(float64(par.Microseconds())/1e3/float64(b.N), "par-ms/op")
}
