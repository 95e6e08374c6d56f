package csvsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/sourcestest"
)

// testNow is the time dates are checked against in these tests.
func testNow() time.Time { return time.Date(2025, time.June, 1, 12, 0, 0, 0, time.UTC) }

// allColumns is the header of every field in the test files.
func allColumns() map[string]string {
	return map[string]string{
		"externalId": "Employee ID",
		"email":      "Work Email",
		"firstName":  "First Name",
		"lastName":   "Last Name",
		"department": "Department",
		"startDate":  "Hire Date",
		"birthDate":  "Birth Date",
		"addBalance": "Balance",
	}
}

// opts maps the given fields with US dates.
func opts(fields ...string) sources.CSVOptions {
	all := allColumns()
	cols := map[string]string{}
	for _, f := range fields {
		cols[f] = all[f]
	}
	return sources.CSVOptions{Mapping: sources.Mapping{
		Columns:     cols,
		DateLayouts: map[string]string{"startDate": "01/02/2006", "birthDate": "01/02/2006"},
	}}
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func amount(f float64) *float64 { return &f }

// result is everything one Read produced.
type result struct {
	people []model.Person
	rejs   []model.Rejection
	stats  sources.Stats
	err    error
}

func readFile(t *testing.T, path string, o sources.CSVOptions) result {
	t.Helper()
	var res result
	src := File{Path: path, Options: o, Now: testNow()}
	var got sourcestest.Result
	res.stats, res.err = src.Read(context.Background(), got.Handler())
	res.people, res.rejs = got.People, got.Rejections
	return res
}

func TestReadMessyExports(t *testing.T) {
	names := []string{"externalId", "email", "firstName", "lastName"}
	tests := []struct {
		name   string
		file   string
		opts   sources.CSVOptions
		people []model.Person
		stats  sources.Stats
	}{
		{
			name: "utf-8 with BOM, CRLF, header names in odd case and spaces, leading zeros",
			file: "utf8_bom_crlf.csv",
			opts: opts("externalId", "email", "firstName", "lastName", "department", "startDate", "birthDate", "addBalance"),
			people: []model.Person{
				{ExternalID: "00123", Email: "ana.lopez@example.com", FirstName: "Ana", LastName: "López", Department: "Sales",
					StartDate: day(2021, time.March, 4), BirthDate: day(1990, time.December, 31), AddBalance: amount(25.5), Line: 2},
				{ExternalID: "0042", Email: "bob@example.com", FirstName: "Bob", LastName: "Martin",
					StartDate: day(2020, time.November, 1), Line: 3},
			},
			stats: sources.Stats{Rows: 2, Accepted: 2},
		},
		{
			name: "utf-16le with BOM, tab separated (Excel unicode text)",
			file: "utf16le_excel.txt",
			opts: opts("externalId", "email", "firstName", "lastName", "department", "startDate", "birthDate", "addBalance"),
			people: []model.Person{
				{ExternalID: "000777", Email: "zoe@example.com", FirstName: "Zoé", LastName: "Müller", Department: "R&D",
					StartDate: day(2022, time.January, 15), BirthDate: day(1985, time.February, 28), AddBalance: amount(100), Line: 2},
			},
			stats: sources.Stats{Rows: 1, Accepted: 1},
		},
		{
			name:   "utf-16be with BOM",
			file:   "utf16be.txt",
			opts:   opts(names...),
			people: []model.Person{{ExternalID: "E1", Email: "e1@example.com", FirstName: "José", LastName: "García", Line: 2}},
			stats:  sources.Stats{Rows: 1, Accepted: 1},
		},
		{
			name:   "windows-1252 detected, semicolon detected",
			file:   "cp1252_semicolon.csv",
			opts:   opts("externalId", "email", "firstName", "lastName", "department"),
			people: []model.Person{{ExternalID: "9", Email: "rene@example.com", FirstName: "René", LastName: "Dupré", Department: "Café €", Line: 2}},
			stats:  sources.Stats{Rows: 1, Accepted: 1},
		},
		{
			name: "quoted fields with delimiters, quotes and line breaks keep line numbers",
			file: "quoted_multiline.csv",
			opts: opts("externalId", "email", "firstName", "lastName", "department"),
			people: []model.Person{
				{ExternalID: "1", Email: "a@example.com", FirstName: "Mary, Jane", LastName: "O'Neil", Department: "Sales\nEMEA", Line: 2},
				{ExternalID: "2", Email: "b@example.com", FirstName: `Said "Sam"`, LastName: "Smith", Department: "Line1\nLine2\nLine3", Line: 4},
				{ExternalID: "3", Email: "c@example.com", FirstName: "Carl", LastName: "Jones", Department: "Ops", Line: 7},
			},
			stats: sources.Stats{Rows: 3, Accepted: 3},
		},
		{
			name:  "header only",
			file:  "header_only.csv",
			opts:  opts(names...),
			stats: sources.Stats{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readFile(t, filepath.Join("testdata", tt.file), tt.opts)
			if res.err != nil {
				t.Fatalf("Read: %v", res.err)
			}
			if len(res.rejs) > 0 {
				t.Errorf("unexpected rejections: %v", res.rejs)
			}
			if !reflect.DeepEqual(res.people, tt.people) {
				t.Errorf("people:\n got %s\nwant %s", dump(res.people), dump(tt.people))
			}
			if res.stats != tt.stats {
				t.Errorf("stats = %+v, want %+v", res.stats, tt.stats)
			}
		})
	}
}

func dump(ps []model.Person) string {
	var b strings.Builder
	for _, p := range ps {
		bal := "nil"
		if p.AddBalance != nil {
			bal = fmt.Sprint(*p.AddBalance)
		}
		fmt.Fprintf(&b, "\n  {%q %q %q %q %q %q start=%s birth=%s bal=%s line=%d}", p.ExternalID, p.Email, p.FirstName, p.LastName,
			p.Department, p.Location, p.StartDate.Format(time.DateOnly), p.BirthDate.Format(time.DateOnly), bal, p.Line)
	}
	return b.String()
}

func TestReadBadRows(t *testing.T) {
	o := opts("externalId", "email", "firstName", "lastName", "startDate", "birthDate", "addBalance")
	res := readFile(t, filepath.Join("testdata", "bad_rows.csv"), o)
	if res.err != nil {
		t.Fatalf("Read: %v", res.err)
	}
	const src = "bad_rows.csv"
	rej := func(line int, field, reason string) model.Rejection {
		return model.Rejection{Source: src, Line: line, Field: field, Reason: reason}
	}
	layoutHint := `does not match the layout "01/02/2006" (e.g. 12/31/2024)`
	want := []model.Rejection{
		rej(3, "Hire Date", `date "13/**/****" `+layoutHint),
		rej(4, "Work Email", `not a valid e-mail address: it must hold exactly one "@"`),
		rej(5, "Balance", `amount "1,000.50" is not a plain number: use digits with "." as the decimal separator, no thousands separators, signs or currency`),
		rej(6, "Balance", `amount "-5" is negative; it must be zero or more`),
		rej(7, "First Name", "required value is empty"),
		rej(8, "Employee ID", "duplicate externalId: also on line 9; every occurrence is rejected"),
		rej(9, "Employee ID", "duplicate externalId: first on line 8; every occurrence is rejected"),
		rej(10, "Work Email", "duplicate e-mail: also on line 11; every occurrence is rejected"),
		rej(11, "Work Email", "duplicate e-mail: first on line 10; every occurrence is rejected"),
		rej(12, "", "the row has 3 fields, the header has 7"),
		rej(13, "", `malformed CSV: bare " in non-quoted-field (line 13, column 26)`),
		rej(14, "Birth Date", "birth date 29**-**-** is in the future"),
		rej(15, "Hire Date", "start date 19**-**-** is before the birth date"),
		rej(16, "Birth Date", "person would be younger than 14 on the start date 20**-**-**"),
		rej(17, "Hire Date", "start date 29**-**-** is more than 2 years ahead"),
		rej(18, "Employee ID", `externalId "1.23E+05" looks like a number a spreadsheet rewrote in scientific notation; export the column as text`),
		rej(20, "Hire Date", `date "20**-**-**" `+layoutHint),
	}
	if !reflect.DeepEqual(res.rejs, want) {
		t.Errorf("rejections:\n got %s\nwant %s", rejDump(res.rejs), rejDump(want))
	}
	wantPeople := []model.Person{{ExternalID: "10", Email: "ok@example.com", FirstName: "Ok", LastName: "Row",
		StartDate: day(2020, time.January, 15), BirthDate: day(1990, time.May, 6), AddBalance: amount(10), Line: 2}}
	if !reflect.DeepEqual(res.people, wantPeople) {
		t.Errorf("people:\n got %s\nwant %s", dump(res.people), dump(wantPeople))
	}
	if want := (sources.Stats{Rows: 18, Accepted: 1, Rejected: 17, Skipped: 1}); res.stats != want {
		t.Errorf("stats = %+v, want %+v", res.stats, want)
	}
	t.Run("reasons quote no names or e-mail addresses", func(t *testing.T) {
		for _, r := range res.rejs {
			for _, pii := range []string{"not-an-email", "same@example.com", "dup1@example.com", "Bare", "noname"} {
				if strings.Contains(r.Reason, pii) {
					t.Errorf("line %d reason %q quotes %q", r.Line, r.Reason, pii)
				}
			}
		}
	})
}

func rejDump(rs []model.Rejection) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %d %q %q", r.Line, r.Field, r.Reason)
	}
	return b.String()
}

func TestReadFileErrors(t *testing.T) {
	t.Run("missing column names it and lists the headers found", func(t *testing.T) {
		res := readFile(t, filepath.Join("testdata", "missing_column.csv"), opts("externalId", "email", "firstName", "lastName"))
		var ce *sources.ColumnsError
		if !errors.As(res.err, &ce) {
			t.Fatalf("err = %v, want a *sources.ColumnsError", res.err)
		}
		if !reflect.DeepEqual(ce.Missing, []string{"Employee ID"}) {
			t.Errorf("Missing = %q", ce.Missing)
		}
		wantMsg := `missing_column.csv: missing column(s) "Employee ID"; found: "ID", "Work Email", "First Name", "Last Name"`
		if ce.Error() != wantMsg {
			t.Errorf("message = %q, want %q", ce.Error(), wantMsg)
		}
		if len(res.people) > 0 || len(res.rejs) > 0 {
			t.Errorf("rows went out despite the file error")
		}
	})
	t.Run("column present twice", func(t *testing.T) {
		data := "Employee ID,Work Email,First Name,Last Name, employee id\n1,a@example.com,A,B,2\n"
		_, err := readString(data, opts("externalId", "email", "firstName", "lastName"))
		var ce *sources.ColumnsError
		if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Duplicated, []string{"Employee ID"}) {
			t.Fatalf("err = %v, want a ColumnsError naming Employee ID twice", err)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		_, err := readString("", opts("externalId", "email", "firstName", "lastName"))
		if err == nil || !strings.Contains(err.Error(), "empty file") {
			t.Fatalf("err = %v, want empty file", err)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		o := opts("externalId", "email", "firstName", "lastName")
		o.Delimiter = "|"
		_, err := readString("x\n", o)
		if err == nil || !strings.Contains(err.Error(), "delimiter") {
			t.Fatalf("err = %v, want a delimiter error", err)
		}
	})
	t.Run("error from emit stops the read", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		data := "Employee ID,Work Email,First Name,Last Name\n1,a@example.com,A,B\n2,b@example.com,B,C\n3,c@example.com,C,D\n"
		_, err := Read(context.Background(), "x.csv", strings.NewReader(data), opts("externalId", "email", "firstName", "lastName"),
			sources.Handler{
				Accept: func(model.Person) error { calls++; return stop },
				Reject: func(model.Rejection) error { return nil },
			})
		if !errors.Is(err, stop) || calls != 1 {
			t.Fatalf("err = %v after %d calls, want stop after 1", err, calls)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		data := "Employee ID,Work Email,First Name,Last Name\n1,a@example.com,A,B\n"
		var got sourcestest.Result
		_, err := Read(ctx, "x.csv", strings.NewReader(data), opts("externalId", "email", "firstName", "lastName"), got.Handler())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// readString reads data as a CSV export named "s.csv".
func readString(data string, o sources.CSVOptions) (result, error) {
	var res result
	var got sourcestest.Result
	res.stats, res.err = read(context.Background(), "s.csv", strings.NewReader(data), o, testNow(), got.Handler())
	res.people, res.rejs = got.People, got.Rejections
	return res, res.err
}

func TestConfiguredFormat(t *testing.T) {
	base := opts("externalId", "email", "firstName", "lastName")
	tests := []struct {
		name      string
		data      []byte
		encoding  string
		delimiter string
		wantFirst string
	}{
		{"tab configured", []byte("Employee ID\tWork Email\tFirst Name\tLast Name\n1\ta@example.com\tA,x\tB\n"), "", "tab", "A,x"},
		{"semicolon configured despite more commas", []byte("Employee ID;Work Email;First Name;Last Name\n1;a@example.com;A,x,y;B\n"), "", ";", "A,x,y"},
		{"windows-1252 configured", []byte("Employee ID,Work Email,First Name,Last Name\n1,a@example.com,Ren\xe9,B\n"), "windows-1252", "", "René"},
		{"utf-8 configured with BOM", []byte("\xef\xbb\xbfEmployee ID,Work Email,First Name,Last Name\n1,a@example.com,Ané,B\n"), "UTF-8", "", "Ané"},
		{"utf-16le configured without BOM", utf16le("Employee ID\tWork Email\tFirst Name\tLast Name\n1\ta@example.com\tÅsa\tB\n"), "utf-16le", "", "Åsa"},
		{"windows-1252 configured, a UTF-8 BOM wins (a rejects report saved again)", []byte("\xef\xbb\xbfEmployee ID,Work Email,First Name,Last Name\n1,a@example.com,René,B\n"), "windows-1252", "", "René"},
		{"utf-16le configured, a UTF-8 BOM wins", []byte("\xef\xbb\xbfEmployee ID;Work Email;First Name;Last Name\n1;a@example.com;Åsa;B\n"), "utf-16le", ";", "Åsa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.Encoding, o.Delimiter = tt.encoding, tt.delimiter
			var got []model.Person
			_, err := read(context.Background(), "c.csv", bytes.NewReader(tt.data), o, testNow(), sources.Handler{
				Accept: func(p model.Person) error { got = append(got, p); return nil },
				Reject: func(r model.Rejection) error { return fmt.Errorf("rejected: %s", r.Error()) },
			})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(got) != 1 || got[0].FirstName != tt.wantFirst {
				t.Fatalf("got %s, want first name %q", dump(got), tt.wantFirst)
			}
		})
	}
}

func utf16le(s string) []byte {
	var b []byte
	for _, r := range s {
		if r > 0xFFFF {
			panic("test helper handles the BMP only")
		}
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

func TestDetectDelimiter(t *testing.T) {
	tests := []struct {
		name string
		head string
		want rune
	}{
		{"comma", "a,b,c\n1;2;3;4;5\n", ','},
		{"semicolon", "a;b;c\n", ';'},
		{"tab", "a\tb\tc", '\t'},
		{"quoted delimiters do not count", `"a;b;c;d",x,y` + "\n", ','},
		{"quoted newline does not end the header", "\"a\nb\";c,d;e\n", ';'},
		{"single column", "email\n", ','},
		{"tie goes to tab", "a\tb;c\n", '\t'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detectDelimiter([]byte(tt.head)); got != tt.want {
				t.Errorf("detectDelimiter(%q) = %q, want %q", tt.head, got, tt.want)
			}
		})
	}
}

func TestDetectEncoding(t *testing.T) {
	long := bytes.Repeat([]byte("abcdefghé,"), 20000) // 220 kB: valid UTF-8 across chunk edges
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"utf-8 BOM", []byte("\xef\xbb\xbfa,b\n"), sources.EncodingUTF8},
		{"utf-16le BOM", []byte("\xff\xfea\x00"), sources.EncodingUTF16LE},
		{"utf-16be BOM", []byte("\xfe\xff\x00a"), sources.EncodingUTF16BE},
		{"plain ascii", []byte("a,b\n"), sources.EncodingUTF8},
		{"long utf-8 without BOM", long, sources.EncodingUTF8},
		{"invalid byte late in the file", append(append([]byte{}, long...), 0xE9, '\n'), sources.EncodingWindows1252},
		{"empty", nil, sources.EncodingUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := detectEncoding(bytes.NewReader(tt.data))
			if err != nil || got != tt.want {
				t.Errorf("detectEncoding = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFileChangedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	data := "Employee ID,Work Email,First Name,Last Name\n1,a@example.com,A,B\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	src := File{Path: path, Options: opts("externalId", "email", "firstName", "lastName"), Now: testNow()}
	var got sourcestest.Result
	h := got.Handler()
	h.Accept = func(model.Person) error {
		// Another process appends to the file while hrsync reads it.
		return os.WriteFile(path, []byte(data+"2,b@example.com,C,D\n"), 0o600)
	}
	if _, err := src.Read(context.Background(), h); !errors.Is(err, sources.ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
}

func TestRowTagsMatchFields(t *testing.T) {
	// UnmarshalCSVWithFields must know every tag of row, and the tags must
	// be the names of sources.Field, which the header is rewritten to.
	rt := reflect.TypeFor[row]()
	var tags []string
	for i := range rt.NumField() {
		tags = append(tags, rt.Field(i).Tag.Get("csv"))
	}
	if !reflect.DeepEqual(tags, sources.FieldNames()) {
		t.Fatalf("row tags = %q, want the field names %q", tags, sources.FieldNames())
	}
	var r row
	for i, tag := range tags {
		if err := r.UnmarshalCSVWithFields(tag, tag+"!"); err != nil {
			t.Fatal(err)
		}
		if got := reflect.ValueOf(r).Field(i).String(); got != tag+"!" {
			t.Errorf("%s set field %s to %q", tag, rt.Field(i).Name, got)
		}
	}
	if err := r.UnmarshalCSVWithFields("nope", "x"); err == nil {
		t.Error("an unknown column was accepted")
	}
}

// TestGocsvFields: the mapping the fast path works out from gocsv puts each
// value in the field of its name, whatever the order, and is refused for a
// header gocsv does not map.
func TestGocsvFields(t *testing.T) {
	names := sources.FieldNames()
	header := []string{names[3], names[0], names[len(names)-1]}
	got, ok := gocsvFields(header)
	if !ok {
		t.Fatalf("no mapping for %q", header)
	}
	for k, f := range got {
		if f.String() != header[k] {
			t.Errorf("value %d (%s) goes to field %s", k, header[k], f)
		}
	}
	if _, ok := gocsvFields([]string{names[0], "nope"}); ok {
		t.Error("a header with a column gocsv does not map was mapped")
	}
}

// trickle reads one byte per call, so that every rune is cut between reads.
type trickle struct{ *bytes.Reader }

func (t trickle) Read(p []byte) (int, error) { return t.Reader.Read(p[:min(len(p), 1)]) }

func TestUTF8ReadAsIs(t *testing.T) {
	o := opts("externalId", "email", "firstName", "lastName")
	o.Encoding = sources.EncodingUTF8
	var b strings.Builder
	b.WriteString("\ufeffEmployee ID,Work Email,First Name,Last Name\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "%d,p%d@example.com,Åsa€𝄞,Öberg\n", i, i)
	}
	valid := b.String()
	bad := valid + "9999,bad@example.com,Jos\xe9,B\n" // Windows-1252 é in a UTF-8 file
	for _, tt := range []struct {
		name     string
		data     string
		rejected int
	}{{"valid, a rune cut by every read", valid, 0}, {"an invalid byte late in the file", bad, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			var got sourcestest.Result
			st, err := read(context.Background(), "u.csv", trickle{bytes.NewReader([]byte(tt.data))}, o, testNow(), got.Handler())
			if err != nil {
				t.Fatal(err)
			}
			if st.Accepted != 3000 || st.Rejected != tt.rejected {
				t.Fatalf("stats %+v", st)
			}
			for _, p := range got.People {
				if p.FirstName != "Åsa€𝄞" || p.LastName != "Öberg" {
					t.Fatalf("line %d: %q %q", p.Line, p.FirstName, p.LastName)
				}
			}
			if tt.rejected > 0 && !strings.Contains(got.Rejections[0].Reason, "could not be decoded") {
				t.Errorf("rejection = %+v", got.Rejections[0])
			}
		})
	}
}

func TestUTF8Watch(t *testing.T) {
	for _, tt := range []struct {
		data string
		bad  bool
	}{
		{"plain", false}, {"Åsa€𝄞", false}, {"a\xffb", true}, {"ends cut \xe2\x82", true}, {"\xe2\x82\xac", false},
		{"over\xc0\x80long", true}, {"\xed\xa0\x80 surrogate", true},
	} {
		for _, chunk := range []int{1, 2, 3, 64} {
			w := &utf8Watch{r: &chunked{data: []byte(tt.data), size: chunk}}
			if _, err := io.ReadAll(w); err != nil {
				t.Fatal(err)
			}
			if w.bad != tt.bad {
				t.Errorf("%q in reads of %d: bad = %v, want %v", tt.data, chunk, w.bad, tt.bad)
			}
		}
	}
}

// chunked reads size bytes per call.
type chunked struct {
	data []byte
	size int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.data)
	c.data = c.data[n:]
	return n, nil
}
