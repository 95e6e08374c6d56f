package csvsrc

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/sourcestest"
)

// fuzzHeader is put before the fuzzed bytes when withHeader is set, so that
// the fuzzer explores rows and not only header errors.
const fuzzHeader = "Employee ID,Work Email,First Name,Last Name,Hire Date,Balance\n"

// FuzzReadCSV reads arbitrary bytes as an export and checks that Read never
// panics, that every row it counts ends accepted or rejected, once, in
// order, and that every line number lies within the file.
func FuzzReadCSV(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, false)
		}
	}
	f.Add([]byte("1,a@example.com,A,B,01/02/2020,5\n\"2\",\"b@example.com\",\"x\ny\",B,,\n"), true)
	f.Add([]byte("1;a@example.com;A;B;;\n"), true)
	f.Add([]byte("\"unterminated,a@example.com,A,B,,\n2,b@example.com,B,C,,\n"), true)
	o := sources.CSVOptions{Mapping: sources.Mapping{
		Columns: map[string]string{
			"externalId": "Employee ID", "email": "Work Email", "firstName": "First Name",
			"lastName": "Last Name", "startDate": "Hire Date", "addBalance": "Balance",
		},
		DateLayouts: map[string]string{"startDate": "01/02/2006"},
	}}
	f.Fuzz(func(t *testing.T, data []byte, withHeader bool) {
		if withHeader {
			data = append([]byte(fuzzHeader), data...)
		}
		lastLine := 0 // no line may lie past the last line of the decoded text
		if format, err := Detect(bytes.NewReader(data), o); err == nil {
			text, err := io.ReadAll(format.decode(bytes.NewReader(data)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			// A lone CR ends a line too (see guard).
			lastLine = bytes.Count(text, []byte("\n")) + bytes.Count(text, []byte("\r")) + 1
		}
		check := func(line int) {
			if line < 2 || line > lastLine {
				t.Fatalf("line %d outside the data rows 2..%d", line, lastLine)
			}
		}
		var got sourcestest.Result
		h := got.Handler()
		prev := 0
		accept := h.Accept
		h.Accept = func(p model.Person) error {
			check(p.Line)
			if p.Line <= prev {
				t.Fatalf("line %d accepted after line %d", p.Line, prev)
			}
			prev = p.Line
			return accept(p)
		}
		st, err := read(context.Background(), "fuzz.csv", bytes.NewReader(data), o, testNow(), h)
		// The fast path, sequential and in chunks, gives what the
		// existing way gives.
		sameReads(t, data, o, 0)
		if err != nil {
			return // a file-level error: nothing to count
		}
		rejected := map[int]bool{}
		for _, r := range got.Rejections {
			check(r.Line)
			rejected[r.Line] = true
		}
		for _, p := range got.People {
			if rejected[p.Line] {
				t.Fatalf("line %d both accepted and rejected", p.Line)
			}
		}
		for _, line := range got.Retracted {
			if !rejected[line] {
				t.Fatalf("line %d taken back without a rejection", line)
			}
		}
		if st.Accepted != len(got.People) || st.Rejected != len(rejected) || st.Accepted+st.Rejected != st.Rows {
			t.Fatalf("stats %+v for %d accepted and %d rejected lines", st, len(got.People), len(rejected))
		}
	})
}

func FuzzUTF8Watch(f *testing.F) {
	f.Add([]byte("Åsa€𝄞"), uint8(1))
	f.Add([]byte("a\xe2\x82"), uint8(2))
	f.Add([]byte("\xf0\x9d\x84\x9e\xff"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		w := &utf8Watch{r: &chunked{data: data, size: int(size%7) + 1}}
		if _, err := io.ReadAll(w); err != nil {
			t.Fatal(err)
		}
		if w.bad == utf8.Valid(data) {
			t.Fatalf("bad = %v for %q (valid UTF-8: %v)", w.bad, data, utf8.Valid(data))
		}
	})
}

// FuzzRecordLimits reads arbitrary bytes under small record limits and
// checks that the limits only ever refuse a file, never change what is
// read of it: a read that passes them gives the same rows as a read
// without limits; a refusal names lines within the file; a read a byte at
// a time gives the same result as a read in large chunks; and the rows
// reported add up to the records of the file.
func FuzzRecordLimits(f *testing.F) {
	f.Add([]byte("1,a@example.com,A,B,,\r2,b@example.com,B,C,,\r"), uint8(3), uint8(1))
	f.Add([]byte("1,a@example.com,\"A\r\nB\",B,,\r\n2,b@example.com,B\rC,,\r\n"), uint8(2), uint8(1))
	f.Add([]byte("1,\"a@example.com,A,B,,\n2,b@example.com,B,C,,\n3,c@example.com,C,D,,\n"), uint8(2), uint8(1))
	f.Add([]byte("1,a@example.com,\"A\"\"x\",B,,\n\"2\"x,b@example.com,B,C,,\n,,,,,\n"), uint8(1), uint8(1))
	o := sources.CSVOptions{Mapping: sources.Mapping{Columns: map[string]string{
		"externalId": "Employee ID", "email": "Work Email", "firstName": "First Name", "lastName": "Last Name",
	}}}
	f.Fuzz(func(t *testing.T, data []byte, lines, kb uint8) {
		data = append([]byte(fuzzHeader), data...)
		limited := o
		limited.MaxRecordLines = int(lines%8) + 1
		limited.MaxRecordBytes = (int(kb%4) + 1) << 10
		unlimited := o
		unlimited.MaxRecordLines, unlimited.MaxRecordBytes = 1<<30, 1<<30

		st, err := read(context.Background(), "f.csv", bytes.NewReader(data), limited, testNow(), new(sourcestest.Result).Handler())
		sameReads(t, data, limited, int(lines)+1) // the fast path gives what the existing way gives
		var got sourcestest.Result
		st1, err1 := read(context.Background(), "f.csv", trickle{bytes.NewReader(data)}, limited, testNow(), got.Handler())
		if fmt.Sprint(err) != fmt.Sprint(err1) || st != st1 {
			t.Fatalf("whole: %+v %v; a byte at a time: %+v %v", st, err, st1, err1)
		}
		var re *sources.RecordError
		if errors.As(err, &re) {
			physical := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
			if re.Line < 1 || re.Line > physical || re.QuoteLine < 0 || re.QuoteLine > physical ||
				(re.QuoteLine > 0 && re.QuoteLine < re.Line) {
				t.Fatalf("record error %+v outside the file's %d lines", re, physical)
			}
			return
		}
		if err != nil {
			return // another file error: nothing to compare
		}
		stU, errU := read(context.Background(), "f.csv", bytes.NewReader(data), unlimited, testNow(), new(sourcestest.Result).Handler())
		if errU != nil || stU != st {
			t.Fatalf("within the limits: %+v; without them: %+v %v", st, stU, errU)
		}
		if st.Accepted+st.Rejected != st.Rows {
			t.Fatalf("stats %+v do not add up", st)
		}
		if recs := countRecords(t, data, limited); st.Rows+st.Skipped != recs {
			t.Fatalf("stats %+v for %d records", st, recs)
		}
	})
}

// countRecords counts the data records of data as encoding/csv reads the
// guarded text, malformed ones included.
func countRecords(t *testing.T, data []byte, o sources.CSVOptions) int {
	t.Helper()
	format, err := Detect(bytes.NewReader(data), o)
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := format.text(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(newGuard("f.csv", text, format.Delimiter, 1<<30, 1<<30))
	cr.Comma, cr.FieldsPerRecord = format.Delimiter, -1
	n := -1 // the header
	for {
		_, err := cr.Read()
		var pe *csv.ParseError
		switch {
		case errors.Is(err, io.EOF):
			return n
		case err == nil || errors.As(err, &pe):
			n++
		default:
			t.Fatalf("count records: %v", err)
		}
	}
}

// FuzzValidUTF8At checks the parallel UTF-8 check of a file against
// utf8.Valid, with sections of 1 to 16 bytes.
func FuzzValidUTF8At(f *testing.F) {
	f.Add([]byte("Åsa€𝄞"), uint8(1))
	f.Add([]byte("a\x80\x80\x80\x80\x80b"), uint8(3))
	f.Add([]byte("ab\xe2\x82"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, section uint8) {
		got, err := validUTF8At(bytes.NewReader(data), int64(len(data)), int64(section%16)+1)
		if err != nil || got != utf8.Valid(data) {
			t.Fatalf("validUTF8At(%q, %d) = %v, %v; utf8.Valid says %v", data, section%16+1, got, err, utf8.Valid(data))
		}
	})
}
