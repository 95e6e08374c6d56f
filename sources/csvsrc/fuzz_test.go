package csvsrc

import (
	"bytes"
	"context"
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
			lastLine = bytes.Count(text, []byte("\n")) + 1
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
