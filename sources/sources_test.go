package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/model"
)

func baseMapping() Mapping {
	return Mapping{Columns: map[string]string{
		"externalId": "ID", "email": "Mail", "firstName": "First", "lastName": "Last",
		"startDate": "Start", "birthDate": "Birth", "addBalance": "Balance",
	}}
}

func paths(errs []error) []string {
	out := []string{}
	for _, err := range errs {
		var fe *FieldError
		if !errors.As(err, &fe) {
			out = append(out, "not a FieldError: "+err.Error())
			continue
		}
		out = append(out, fe.Path)
	}
	return out
}

func TestMappingValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(m *Mapping)
		want   []string
	}{
		{"valid", func(*Mapping) {}, []string{}},
		{"unknown field", func(m *Mapping) { m.Columns["nickname"] = "Nick" }, []string{"columns.nickname"}},
		{"same header twice, case-insensitively", func(m *Mapping) { m.Columns["department"] = " id " }, []string{"columns.externalId"}},
		{"layout for a non-date field", func(m *Mapping) { m.DateLayouts = map[string]string{"email": "2006"} }, []string{"dateLayouts.email"}},
		{"layout without a day", func(m *Mapping) { m.DateLayouts = map[string]string{"startDate": "01/2006"} }, []string{"dateLayouts.startDate"}},
		{"layout that is no layout", func(m *Mapping) { m.DateLayouts = map[string]string{"birthDate": "MM/DD/YYYY"} }, []string{"dateLayouts.birthDate"}},
		{"required without email", func(m *Mapping) { m.Required = []string{"externalId"} }, []string{"required"}},
		{"required unknown", func(m *Mapping) { m.Required = []string{"externalId", "email", "shoeSize"} }, []string{"required[2]"}},
		{"required field without column", func(m *Mapping) { delete(m.Columns, "lastName") }, []string{"columns.lastName"}},
		{"optional names may go unmapped", func(m *Mapping) {
			m.Required = []string{"email", "externalId"}
			delete(m.Columns, "firstName")
			delete(m.Columns, "lastName")
		}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := baseMapping()
			tt.change(&m)
			if got := paths(m.Validate()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("paths = %q, want %q (errors: %v)", got, tt.want, m.Validate())
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Run("csv", func(t *testing.T) {
		o := CSVOptions{Mapping: baseMapping(), Delimiter: "|", Encoding: "latin9"}
		if got := paths(o.Validate()); !reflect.DeepEqual(got, []string{"delimiter", "encoding"}) {
			t.Errorf("paths = %q", got)
		}
		for _, d := range []string{"", ",", ";", "\t", "tab"} {
			o := CSVOptions{Mapping: baseMapping(), Delimiter: d, Encoding: "UTF-16LE"}
			if errs := o.Validate(); len(errs) > 0 {
				t.Errorf("delimiter %q: %v", d, errs)
			}
		}
	})
	t.Run("drop folder", func(t *testing.T) {
		o := DropFolderOptions{Pattern: "[", StableFor: -1}
		// dir is the local kind's to check (sources/dropfolder).
		if got := paths(o.Validate()); !reflect.DeepEqual(got, []string{"pattern", "stableFor"}) {
			t.Errorf("paths = %q", got)
		}
		d := DropFolderOptions{Dir: "in"}.WithDefaults()
		if d.Pattern != DefaultPattern || d.StableFor != DefaultStableFor {
			t.Errorf("defaults = %+v", d)
		}
	})
	t.Run("sql", func(t *testing.T) {
		o := SQLOptions{Driver: "oracle", Mapping: baseMapping()}
		if got := paths(o.Validate()); !reflect.DeepEqual(got, []string{"driver", "dsn", "query"}) {
			t.Errorf("paths = %q", got)
		}
	})
	t.Run("sql options print without the DSN", func(t *testing.T) {
		o := SQLOptions{Driver: "postgres", DSN: "postgres://u:hunter2@db/hr", Query: "SELECT 1"}
		for _, s := range []string{o.String(), o.GoString()} {
			if strings.Contains(s, "hunter2") || !strings.Contains(s, "[redacted]") {
				t.Errorf("rendered %q", s)
			}
		}
	})
}

func TestCheckEmail(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"  Ana.Lopez@Example.COM ", "ana.lopez@example.com", true},
		{"first+tag@sub.example.co.uk", "first+tag@sub.example.co.uk", true},
		{"", "", true},
		{"no-at-sign", "", false},
		{"two@@example.com", "", false},
		{"a@b@example.com", "", false},
		{"Ana <ana@example.com>", "", false},
		{"ana@localhost", "", false},
		{"ana@example..com", "", false},
		{"ana@-example.com", "", false},
		{"ana@exa_mple.com", "", false},
		{"ana@example.123", "", false},
		{"ana lopez@example.com", "", false},
		{"@example.com", "", false},
		{strings.Repeat("a", 65) + "@example.com", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, reason := CheckEmail(tt.in)
			if got != tt.want || (reason == "") != tt.ok {
				t.Errorf("CheckEmail(%q) = %q, %q", tt.in, got, reason)
			}
			if reason != "" && strings.Contains(reason, strings.TrimSpace(tt.in)) {
				t.Errorf("reason %q quotes the address", reason)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantNil bool
		bad     bool
	}{
		{"", 0, true, false},
		{"0", 0, false, false},
		{" 25.50 ", 25.5, false, false},
		{"1000", 1000, false, false},
		{"1,000.50", 0, true, true},
		{"1.000,50", 0, true, true},
		{"12,5", 0, true, true},
		{"-5", 0, true, true},
		{"+5", 0, true, true},
		{"1e3", 0, true, true},
		{"NaN", 0, true, true},
		{"Inf", 0, true, true},
		{".5", 0, true, true},
		{"5.", 0, true, true},
		{"$5", 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, reason := ParseAmount(tt.in)
			if (reason != "") != tt.bad || (got == nil) != tt.wantNil || (got != nil && *got != tt.want) {
				t.Errorf("ParseAmount(%q) = %v, %q", tt.in, got, reason)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		value, layout string
		want          time.Time
		bad           bool
	}{
		{"03/04/2021", "01/02/2006", time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC), false},
		{"03/04/2021", "02/01/2006", time.Date(2021, 4, 3, 0, 0, 0, 0, time.UTC), false},
		{"3/4/2021", "1/2/2006", time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC), false},
		{"3/4/2021", "01/02/2006", time.Time{}, true},
		{"13/04/2021", "01/02/2006", time.Time{}, true},
		{"02/30/2021", "01/02/2006", time.Time{}, true},
		{"2021-03-04", "01/02/2006", time.Time{}, true},
		{"2021-03-04T23:30:00+02:00", time.RFC3339, time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC), false},
		{"01/01/1899", "01/02/2006", time.Time{}, true},
		{"  ", "01/02/2006", time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.value+" as "+tt.layout, func(t *testing.T) {
			got, reason := ParseDate(tt.value, tt.layout)
			if !got.Equal(tt.want) || (reason != "") != tt.bad {
				t.Errorf("ParseDate = %v, %q", got, reason)
			}
		})
	}
}

// fakeReader serves rows in batches of size, so Run can be tested without
// a file; fail, when set, is returned instead of the batch holding that row.
type fakeReader struct {
	rows []Row
	size int
	fail error
	at   int
}

func (f *fakeReader) Next(_ context.Context, b *Batch) error {
	if f.at >= len(f.rows) {
		return io.EOF
	}
	end := min(f.at+f.size, len(f.rows))
	b.Rows = append(b.Rows[:0], f.rows[f.at:end]...)
	f.at = end
	if f.fail != nil && f.at > len(f.rows)/2 {
		return f.fail
	}
	return nil
}

func (f *fakeReader) Fill(*Batch) error { return nil }

func rowsOf(rows ...Row) *fakeReader { return &fakeReader{rows: rows, size: 2} }

func row(line int, id, email string) Row {
	var r Row
	r.Line = line
	r.Text[ExternalID], r.Text[Email], r.Text[FirstName], r.Text[LastName] = id, email, "F", "L"
	return r
}

// collect runs Run and keeps what a caller would keep: the accepted people
// less the retracted ones, and the rejections sorted by line (stable).
func collect(t *testing.T, m Mapping, rd Reader) ([]model.Person, []model.Rejection, Stats, error) {
	t.Helper()
	v, err := NewValidator("src", m, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var people []model.Person
	var rejs []model.Rejection
	st, err := Run(context.Background(), v, rd, Handler{
		Accept: func(x model.Person) error { people = append(people, x); return nil },
		Reject: func(x model.Rejection) error { rejs = append(rejs, x); return nil },
		Retract: func(line int) error {
			i := slices.IndexFunc(people, func(p model.Person) bool { return p.Line == line })
			if i < 0 {
				t.Errorf("retract of line %d, which was not accepted", line)
				return nil
			}
			people = slices.Delete(people, i, i+1)
			return nil
		},
	})
	slices.SortStableFunc(rejs, func(a, b model.Rejection) int { return a.Line - b.Line })
	return people, rejs, st, err
}

func TestRun(t *testing.T) {
	m := baseMapping()
	t.Run("a key seen three times rejects all three, the first naming the others", func(t *testing.T) {
		rows := []Row{row(2, "A", "a@x.io"), row(3, "A", "b@x.io"), row(4, "B", "c@x.io"), row(5, " A ", "d@x.io")}
		people, rejs, st, err := collect(t, m, rowsOf(rows...))
		if err != nil {
			t.Fatal(err)
		}
		want := []model.Rejection{
			{Source: "src", Line: 2, Field: "ID", Reason: "duplicate externalId: also on line 3 and 1 more line(s); every occurrence is rejected"},
			{Source: "src", Line: 3, Field: "ID", Reason: "duplicate externalId: first on line 2; every occurrence is rejected"},
			{Source: "src", Line: 5, Field: "ID", Reason: "duplicate externalId: first on line 2; every occurrence is rejected"},
		}
		if !reflect.DeepEqual(rejs, want) {
			t.Errorf("rejections = %+v", rejs)
		}
		if len(people) != 1 || people[0].ExternalID != "B" || people[0].Line != 4 {
			t.Errorf("people = %+v", people)
		}
		if st != (Stats{Rows: 4, Accepted: 1, Rejected: 3}) {
			t.Errorf("stats = %+v", st)
		}
	})
	t.Run("IDs are case-sensitive text, e-mails are not", func(t *testing.T) {
		rows := []Row{row(1, "e01", "X@x.io"), row(2, "E01", "x@X.IO"), row(3, "007", "y@x.io"), row(4, "7", "z@x.io")}
		people, rejs, _, err := collect(t, m, rowsOf(rows...))
		if err != nil {
			t.Fatal(err)
		}
		if len(rejs) != 2 || rejs[0].Field != "Mail" || rejs[1].Field != "Mail" {
			t.Errorf("rejections = %+v", rejs)
		}
		if len(people) != 2 || people[0].ExternalID != "007" || people[1].ExternalID != "7" {
			t.Errorf("people = %+v", people)
		}
	})
	t.Run("one rejection per bad field", func(t *testing.T) {
		r := row(9, "", "bad")
		r.Text[AddBalance] = "1,5"
		_, rejs, st, err := collect(t, m, rowsOf(r))
		if err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, x := range rejs {
			fields = append(fields, x.Field)
		}
		if !reflect.DeepEqual(fields, []string{"ID", "Mail", "Balance"}) || st.Rejected != 1 {
			t.Errorf("fields = %q, stats %+v", fields, st)
		}
	})
	t.Run("a reader's error fails the read", func(t *testing.T) {
		boom := errors.New("disk on fire")
		rows := make([]Row, 50)
		for i := range rows {
			rows[i] = row(i+2, fmt.Sprint(i), fmt.Sprintf("p%d@x.io", i))
		}
		_, _, _, err := collect(t, m, &fakeReader{rows: rows, size: 3, fail: boom})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want %v", err, boom)
		}
	})
	t.Run("a handler's error stops the read", func(t *testing.T) {
		v, err := NewValidator("src", m, testNow)
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]Row, 5000)
		for i := range rows {
			rows[i] = row(i+2, fmt.Sprint(i), fmt.Sprintf("p%d@x.io", i))
		}
		stop := errors.New("enough")
		accepted := 0
		_, err = Run(context.Background(), v, &fakeReader{rows: rows, size: 7}, Handler{
			Accept: func(model.Person) error {
				if accepted++; accepted == 100 {
					return stop
				}
				return nil
			},
			Reject: func(model.Rejection) error { return nil },
		})
		if !errors.Is(err, stop) || accepted != 100 {
			t.Errorf("err = %v after %d rows, want %v after 100", err, accepted, stop)
		}
	})
	t.Run("a cancelled context stops the read", func(t *testing.T) {
		v, err := NewValidator("src", m, testNow)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		rows := make([]Row, 5000)
		for i := range rows {
			rows[i] = row(i+2, fmt.Sprint(i), fmt.Sprintf("p%d@x.io", i))
		}
		_, err = Run(ctx, v, &fakeReader{rows: rows, size: 7}, Handler{
			Accept: func(model.Person) error { cancel(); return nil },
			Reject: func(model.Rejection) error { return nil },
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("the first row of a key, already rejected, is not taken back", func(t *testing.T) {
		bad := row(2, "A", "a@x.io")
		bad.Text[AddBalance] = "-1"
		people, rejs, st, err := collect(t, m, rowsOf(bad, row(3, "A", "b@x.io"), row(4, "C", "a@x.io")))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range rejs {
			reason, _, _ := strings.Cut(x.Reason, ";")
			got = append(got, fmt.Sprintf("%d %s %s", x.Line, x.Field, reason))
		}
		want := []string{`2 Balance amount "-1" is negative`, "2 ID duplicate externalId: also on line 3",
			"2 Mail duplicate e-mail: also on line 4", "3 ID duplicate externalId: first on line 2",
			"4 Mail duplicate e-mail: first on line 2"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rejections = %q, want %q", got, want)
		}
		if len(people) != 0 || st != (Stats{Rows: 3, Rejected: 3}) {
			t.Errorf("people = %+v, stats = %+v", people, st)
		}
	})
	t.Run("a row with a problem is rejected whole", func(t *testing.T) {
		r := Row{Line: 4, Problem: "malformed"}
		_, rejs, _, err := collect(t, m, rowsOf(r))
		if err != nil || !reflect.DeepEqual(rejs, []model.Rejection{{Source: "src", Line: 4, Reason: "malformed"}}) {
			t.Errorf("rejections = %+v, %v", rejs, err)
		}
	})
	t.Run("native dates win over text", func(t *testing.T) {
		r := row(1, "A", "a@x.io")
		r.Date[StartDate] = time.Date(2020, 5, 6, 23, 0, 0, 0, time.FixedZone("x", -5*3600))
		people, _, _, err := collect(t, m, rowsOf(r))
		if err != nil || len(people) != 1 || !people[0].StartDate.Equal(time.Date(2020, 5, 6, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("people = %+v, %v", people, err)
		}
	})
	t.Run("IDs with control characters or undecodable bytes", func(t *testing.T) {
		rows := []Row{row(1, "A\x01", "a@x.io"), row(2, "B\uFFFD", "b@x.io")}
		_, rejs, _, err := collect(t, m, rowsOf(rows...))
		if err != nil || len(rejs) != 2 || !strings.Contains(rejs[1].Reason, "encoding") {
			t.Errorf("rejections = %+v, %v", rejs, err)
		}
	})
}

// testNow is the time the tests' dates are checked against.
var testNow = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
