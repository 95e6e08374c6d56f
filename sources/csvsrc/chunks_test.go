package csvsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/sources"
)

// event is one call a read made to its handler.
type event struct {
	kind   string // accept, reject or retract
	person model.Person
	hashes sources.Hashes
	rej    model.Rejection
	line   int
}

// logged is everything one read produced, its handler's calls in order.
type logged struct {
	events []event
	stats  sources.Stats
	err    error
}

// readLogged reads data in mode and logs every call to the handler.
func readLogged(data []byte, o sources.CSVOptions, mode readMode) logged {
	var l logged
	h := sources.Handler{
		AcceptHashed: func(p model.Person, hs sources.Hashes) error {
			l.events = append(l.events, event{kind: "accept", person: p, hashes: hs})
			return nil
		},
		Reject: func(x model.Rejection) error {
			l.events = append(l.events, event{kind: "reject", rej: x})
			return nil
		},
		Retract: func(line int) error {
			l.events = append(l.events, event{kind: "retract", line: line})
			return nil
		},
	}
	if mode.lend {
		// A read that lends its values hands them to AcceptRow alone,
		// valid during the call: the log keeps copies.
		h.AcceptRow = func(p *model.Person, hs sources.Hashes) error {
			l.events = append(l.events, event{kind: "accept", person: clonePerson(*p), hashes: hs})
			return nil
		}
	}
	l.stats, l.err = readWith(context.Background(), "same.csv", bytes.NewReader(data), o, testNow(), mode, h)
	return l
}

// clonePerson copies the strings of p, which a read may have lent.
func clonePerson(p model.Person) model.Person {
	for _, s := range []*string{&p.ExternalID, &p.Email, &p.FirstName, &p.LastName, &p.Department, &p.Location} {
		*s = strings.Clone(*s)
	}
	return p
}

// sameReads reads data the existing way (sequentially, every record with
// encoding/csv and gocsv: readMode.slow), then sequentially and in chunks
// of at least chunk bytes with the fast path, in chunks the existing way,
// and in chunks with the fast path lending its values, and fails unless
// all give the same error or, without one, the same stats and the same
// calls to the handler in the same order. After a file
// error the rows handed over before it are not compared: which rows a read
// hands over before it stops depends on how it buffers the text,
// sequential or not, and the caller drops them with the file.
func sameReads(t *testing.T, data []byte, o sources.CSVOptions, chunk int) {
	t.Helper()
	ref := readLogged(data, o, readMode{slow: true})
	for _, mode := range []readMode{{}, {parallel: true, chunk: chunk}, {parallel: true, chunk: chunk, slow: true}, {parallel: true, chunk: chunk, lend: true}} {
		sameLogs(t, fmt.Sprintf("%+v", mode), ref, readLogged(data, o, mode))
	}
}

// sameLogs fails unless got, read in mode, is ref.
func sameLogs(t *testing.T, mode string, ref, got logged) {
	t.Helper()
	if fmt.Sprint(ref.err) != fmt.Sprint(got.err) {
		t.Fatalf("%s: error %v; the existing way %v", mode, got.err, ref.err)
	}
	var rs, rp *sources.RecordError
	if errors.As(ref.err, &rs) != errors.As(got.err, &rp) || (rs != nil && *rs != *rp) {
		t.Fatalf("%s: record error %+v; the existing way %+v", mode, rp, rs)
	}
	if ref.err != nil {
		return
	}
	if ref.stats != got.stats {
		t.Fatalf("%s: stats %+v; the existing way %+v", mode, got.stats, ref.stats)
	}
	if !reflect.DeepEqual(ref.events, got.events) {
		for i := range min(len(ref.events), len(got.events)) {
			if !reflect.DeepEqual(ref.events[i], got.events[i]) {
				t.Fatalf("%s: call %d: %+v; the existing way %+v", mode, i, got.events[i], ref.events[i])
			}
		}
		t.Fatalf("%s: %d calls; the existing way %d", mode, len(got.events), len(ref.events))
	}
}

// chunkSizes are the chunk sizes the tests read with: a record per chunk,
// chunks cut inside long records, and the default.
func chunkSizes() []int { return []int{1, 2, 3, 7, 16, 100, 4096, 0} }

// sameOptions are the options the differential tests read with: every
// column of the test files, a few, small record limits, and UTF-8 as
// configured.
func sameOptions() map[string]sources.CSVOptions {
	all := opts("externalId", "email", "firstName", "lastName", "department", "startDate", "birthDate", "addBalance")
	few := opts("externalId", "email", "firstName", "lastName")
	small := few
	small.MaxRecordLines, small.MaxRecordBytes = 3, 1<<10
	fuzz := sources.CSVOptions{Mapping: sources.Mapping{
		Columns: map[string]string{
			"externalId": "Employee ID", "email": "Work Email", "firstName": "First Name",
			"lastName": "Last Name", "startDate": "Hire Date", "addBalance": "Balance",
		},
		DateLayouts: map[string]string{"startDate": "01/02/2006"},
	}}
	utf8 := few
	utf8.Encoding = sources.EncodingUTF8 // bytes that are not UTF-8 are replaced, not decoded as Windows-1252
	return map[string]sources.CSVOptions{"all": all, "few": few, "small limits": small, "fuzz": fuzz, "utf-8": utf8}
}

// corpusInput is one input of a fuzz corpus file of FuzzReadCSV: its data,
// with the fuzz header when the file says so.
func corpusInput(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "[]byte(") && strings.HasSuffix(line, ")"):
			s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			data = []byte(s)
		case line == "bool(true)":
			data = append([]byte(fuzzHeader), data...)
		}
	}
	return data
}

// messyInputs are exports of the messy-files work, each written to be cut
// in many places: records over several lines, CR-only line ends, stray
// quotes, record limits, bytes that are not UTF-8, duplicates far apart.
func messyInputs() map[string]string {
	head := "Employee ID,Work Email,First Name,Last Name,Hire Date,Balance\n"
	var many strings.Builder
	many.WriteString(head)
	for i := range 300 {
		fmt.Fprintf(&many, "%d,p%d@example.com,\"First\n%d\",\"Last, \"\"%d\"\"\",01/02/2020,%d\n", i%250, i, i, i, i)
		if i%17 == 0 {
			many.WriteString(",,,,,\n\n")
		}
	}
	return map[string]string{
		"quoted lines":        head + "1,a@example.com,\"A\nB\",C,,\n2,b@example.com,\"x\r\ny\",D,,\r\n3,c@example.com,E,F,,",
		"cr only":             strings.ReplaceAll(head, "\n", "\r") + "1,a@example.com,\"A\rB\",C,,\r2,b@example.com,B,C,,\r",
		"bom crlf":            "\xEF\xBB\xBF" + strings.ReplaceAll(head, "\n", "\r\n") + "1,a@example.com,A,B,,\r\n",
		"lone cr":             head + "1,a@example.com,A,B,,\r2,b@example.com,B,C,,\n3,c@example.com,\"C\rD\",E,,\n",
		"stray quote":         head + "1,a@example.com,\"A,B,,\n2,b@example.com,B,C,,\n3,c@example.com,C,D,,\n",
		"bare then quoted":    head + "1,a\"b,\"x\n\"abc\n3,d@example.com,D,E,,\n4,e@example.com,\"E\nF\",G,,\n",
		"bare late":           head + "1,a@example.com,A,B,,\n2,b@example.com,B,C,,\n3,c\"c@example.com,\"C\nD\",E,,\n4,d@example.com,D,E,,\n",
		"text after quote":    head + "1,a@example.com,\"A\"x,B,,\n2,b@example.com,\"B\nC\",D,,\n",
		"too many lines":      head + "1,a@example.com,\"A\n\n\n\n\nB\",C,,\n",
		"field counts":        head + "1,a@example.com\n2,b@example.com,B,C,,,,\n3,c@example.com,C,D,,,x\n",
		"not utf-8":           head + "1,a@example.com,Ren\xe9,B,,\n2,b@example.com,\"B\xff\nC\",D,,\n",
		"duplicates":          head + "1,a@example.com,A,B,,\n2,A@example.com,B,C,,\n1,c@example.com,C,D,,\n1,a@example.com,D,E,,\n",
		"no final line end":   head + "1,a@example.com,A,B,,\n2,b@example.com,\"B\nC\",D,,",
		"blank lines":         head + "\n\n,,,,,\n1,a@example.com,A,B,,\n\r\n\n",
		"header only":         strings.TrimSuffix(head, "\n"),
		"header over lines":   "\"Employee\nID\",Work Email,First Name,Last Name,Hire Date,Balance\n1,a@example.com,A,B,,\n",
		"many rows":           many.String(),
		"semicolons, cp1252":  "Employee ID;Work Email;First Name;Last Name;Hire Date;Balance\n1;a@example.com;Ren\xe9;\"Dupr\xe9\n\";;\n",
		"utf-16le":            "\xff\xfe" + string(utf16le(head+"1,a@example.com,\"A\nB\",C,,\n2,b@example.com,B,C,,\n")),
		"quote at line start": head + "\"1\",a@example.com,A,B,,\n\"2\"\",b@example.com,B,C,,\n3,c@example.com,C,D,,\n",
		"ragged rows":         head + "1,a@example.com,A\n2,b@example.com,B,C,,, ,\t\n3,c@example.com,C,D,,,\u00a0x\n4\n,\n5,e@example.com,E,F,,,,,,\n",
		"blank rows":          head + " , ,,,,\n,,,,,, \n\t,,,,,\n1,a@example.com,A,B,,\n,,,,,\u00a0\n",
		"trailing delimiter":  strings.TrimSuffix(head, "\n") + ",\n1,a@example.com,A,B,,,\n2,b@example.com,B,C,,\n",
		"header case, spaces": " employee id ,WORK EMAIL,first name,  Last Name\t,hire date,BALANCE\n1,a@example.com,A,B,01/02/2020,5\n",
		"duplicate header":    "Notes,Employee ID,Notes,Work Email,First Name,Last Name,Hire Date,Balance\nx,1,y,a@example.com,A,B,,\n",
		"mapped twice":        head + "\u200b,Employee ID\n1,a@example.com,A,B,,\n",
		"unknown columns": "Cost Center,Employee ID,Work Email,Manager,First Name,Last Name,Hire Date,Balance,Notes\n" +
			"C1,1,a@example.com,M,A,B,01/02/2020,5,n\nC2,2,b@example.com,M,B,C,,,\n",
		"crlf plain":        strings.ReplaceAll(head+"1,a@example.com,A,B,,\n\n2,b@example.com,B,C,,\n3,c@example.com,C\r\r,D,,\n", "\n", "\r\n"),
		"bom plain":         "\xEF\xBB\xBF" + head + "1,a@example.com,A,B,,\n2,b@example.com,B,C,,\r",
		"plain then quoted": head + "1,a@example.com,A,B,,\n2,b@example.com,\"B\nC\",D,,\n3,c@example.com,C,D,,\n4,d@example.com,D,E,,\n",
		"well quoted": head + "\"1\",\"a@example.com\",\"A \"\"x\"\", y\",B,\"\",\"\"\n2,b@example.com,\"B,C\",,,\n" +
			"\"3\",c@example.com,\"C\"x,D,,\n4,d@example.com,\"\",,,\"5\"\n\"\",\"\",\"\",\"\",\"\",\"\"\n5,e@example.com,E,\"F\"\"\",,\n" +
			"6,f@example.com,F,\"G\n\"\"H\"\"\",,\n7,g@example.com,\"G\",\"H\",,,\" \"\n8,h@example.com,\"H\"\"\"\"\",I,,\n",
		"quoted crlf":   strings.ReplaceAll(head+"1,\"a@example.com\",\"A, B\",C,,\n2,b@example.com,\"B\nC\",D,,\n3,c@example.com,\"\",D,,\n", "\n", "\r\n"),
		"invalid dates": head + "1,a@example.com,A,B,13/45/2020,x\n2,b@example.com,B,C,01/02/2999,-1\n",
	}
}

// TestParallelReadSameAsSequential reads every test file, the fuzz corpus
// of the CSV reader and the messy exports both ways, with chunks of many
// sizes, and requires the same result.
func TestParallelReadSameAsSequential(t *testing.T) {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	corpus, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzReadCSV", "*"))
	for _, name := range corpus {
		inputs[name] = corpusInput(t, name)
	}
	for name, text := range messyInputs() {
		inputs[name] = []byte(text)
	}
	if len(files) == 0 || len(corpus) == 0 {
		t.Fatal("no test files or fuzz corpus found")
	}
	for name, data := range inputs {
		for oname, o := range sameOptions() {
			t.Run(name+"/"+oname, func(t *testing.T) {
				for _, chunk := range chunkSizes() {
					sameReads(t, data, o, chunk)
				}
			})
		}
	}
}

// TestParallelReadLongValue: a 10 MB value, in one chunk, gives the same
// result both ways.
func TestParallelReadLongValue(t *testing.T) {
	long := strings.Repeat("y", 10<<20)
	data := []byte(fuzzHeader + "1,a@example.com,A,B,,\n2,b@example.com,\"" + long + "\",B,,\n3,c@example.com,C,D,,\n")
	o := sameOptions()["fuzz"]
	o.MaxRecordBytes = 1 << 30
	sameReads(t, data, o, 0)
	sameReads(t, data, o, 100)
}

// FuzzParallelRead reads arbitrary bytes sequentially and in chunks (of 1
// to 64 bytes, so that small inputs are cut in many places), with or
// without small record limits, and requires the same result.
func FuzzParallelRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, uint8(0), uint8(0))
		}
	}
	for _, text := range messyInputs() {
		f.Add([]byte(text), uint8(3), uint8(0))
		f.Add([]byte(text), uint8(0), uint8(5))
	}
	corpus, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzReadCSV", "*"))
	for _, name := range corpus {
		f.Add(corpusInput(f, name), uint8(1), uint8(0))
	}
	f.Add([]byte(fuzzHeader+"1,a\"b,\"x\n\"abc\n3,d,,,,\n"), uint8(1), uint8(0))
	o := sameOptions()["fuzz"]
	f.Fuzz(func(t *testing.T, data []byte, chunk, limits uint8) {
		lo := o
		if limits != 0 {
			lo.MaxRecordLines = int(limits%8) + 1
			lo.MaxRecordBytes = (int(limits/8%4) + 1) << 10
		}
		sameReads(t, data, lo, int(chunk%64)+1)
	})
}

// TestLendingReadCopiesNoValues reads plain and quoted records with the
// values lent and copied, and checks what lending is for: the values of
// each record are no longer a new string, so the read allocates about one
// object a row less (the arena's growth takes a few back).
func TestLendingReadCopiesNoValues(t *testing.T) {
	const rows = 20_000
	var text strings.Builder
	text.WriteString("Employee ID,Work Email,First Name,Last Name,Department\n")
	for i := range rows {
		dept := "Sales"
		if i%10 == 0 {
			dept = `"Research, Development"` // unquoted into the arena
		}
		fmt.Fprintf(&text, "E%06d,p%d@example.com,Ada,Lovelace,%s\n", i, i, dept)
	}
	data := []byte(text.String())
	o := opts("externalId", "email", "firstName", "lastName", "department")
	allocs := func(lend bool) float64 {
		return testing.AllocsPerRun(3, func() {
			accepted := 0
			h := sources.Handler{
				AcceptRow: func(*model.Person, sources.Hashes) error { accepted++; return nil },
				Reject:    func(x model.Rejection) error { return x },
			}
			mode := readMode{parallel: true, lend: lend}
			if _, err := readWith(context.Background(), "lend.csv", bytes.NewReader(data), o, testNow(), mode, h); err != nil {
				t.Fatal(err)
			}
			if accepted != rows {
				t.Fatalf("%d rows accepted, want %d", accepted, rows)
			}
		})
	}
	copied, lent := allocs(false), allocs(true)
	t.Logf("allocations a read of %d rows: %.0f copying the values, %.0f lending them", rows, copied, lent)
	if copied-lent < 0.9*rows {
		t.Fatalf("lending saved %.0f allocations in a read of %d rows, want about one a row", copied-lent, rows)
	}
}
