package csvsrc

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"hrsync/model"
	"hrsync/sources"
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
		lines := map[int]bool{}
		prev := 0
		see := func(line int) {
			if line < 2 || line > lastLine {
				t.Fatalf("line %d outside the data rows 2..%d", line, lastLine)
			}
			if line < prev {
				t.Fatalf("line %d after line %d", line, prev)
			}
			prev = line
			lines[line] = true
		}
		st, err := read(context.Background(), "fuzz.csv", bytes.NewReader(data), o, testNow(),
			func(p model.Person) error {
				if lines[p.Line] {
					t.Fatalf("line %d emitted after it was seen", p.Line)
				}
				see(p.Line)
				return nil
			},
			func(r model.Rejection) error { see(r.Line); return nil })
		if err != nil {
			return // a file-level error: nothing to count
		}
		if st.Accepted+st.Rejected != st.Rows {
			t.Fatalf("stats %+v: rows not all accounted for", st)
		}
		if len(lines) != st.Rows {
			t.Fatalf("%d distinct lines reported for %d rows", len(lines), st.Rows)
		}
	})
}
