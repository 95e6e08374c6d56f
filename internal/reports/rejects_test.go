package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"hrsync/internal/reports/reportstest"
)

func TestNeutralize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"=HYPERLINK(\"http://x.test\",\"click\")", "'=HYPERLINK(\"http://x.test\",\"click\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"-A1", "'-A1"},
		// Plain numbers and phone numbers cannot call anything: kept.
		{"-25.50", "-25.50"},
		{"+49 30 1234-567", "+49 30 1234-567"},
		{"+1 (555) 010-2000", "+1 (555) 010-2000"},
		{"-0", "-0"},
		// Anything else is left alone.
		{"Ada", "Ada"},
		{"", ""},
		{"a=b", "a=b"},
		{"P00012", "P00012"},
	}
	for _, c := range cases {
		if got := Neutralize(c.in); got != c.want {
			t.Errorf("Neutralize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRejectsCSV(t *testing.T) {
	header := []string{"externalId", "email", "firstName", "addBalance", "phone"}
	rows := []RejectedRow{
		{Line: 3, Columns: []string{"email"}, Reasons: []string{`invalid email "a***@e***.test"`},
			Values: []string{"P1", "ada@", "=HYPERLINK(\"x\")", "-25", "+49 30 1"}},
		{Line: 7, Columns: []string{"startDate", "addBalance"}, Reasons: []string{"bad date", "not a number"},
			Values: []string{"P2", "bo@example.test", "Bo, \"Jr\""}},
		{Line: 9, Columns: []string{"(row)"}, Reasons: []string{"malformed CSV"}},
	}
	body, err := RejectsCSV(header, rows, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("starts with the UTF-8 byte order mark", func(t *testing.T) {
		if !bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
			t.Fatalf("no BOM: % x", body[:min(8, len(body))])
		}
		if bytes.Count(body, []byte{0xEF, 0xBB, 0xBF}) != 1 {
			t.Error("more than one BOM")
		}
	})
	t.Run("lines end with CRLF for Excel", func(t *testing.T) {
		if n, crlf := bytes.Count(body, []byte("\n")), bytes.Count(body, []byte("\r\n")); n != crlf || n != 4 {
			t.Errorf("%d line ends, %d CRLF; want 4 of each", n, crlf)
		}
	})
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\uFEFF")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"hrsync line", "hrsync column", "hrsync reason", "externalId", "email", "firstName", "addBalance", "phone"},
		{"3", "email", `invalid email "a***@e***.test"`, "P1", "ada@", "'=HYPERLINK(\"x\")", "-25", "+49 30 1"},
		{"7", "startDate; addBalance", "bad date; not a number", "P2", "bo@example.test", "Bo, \"Jr\"", "", ""},
		{"9", "(row)", "malformed CSV", "", "", "", "", ""},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("records:\n%q\nwant\n%q", recs, want)
	}
	t.Run("its line column marks a file of corrections", func(t *testing.T) {
		if !strings.EqualFold(recs[0][0], LineColumn) {
			t.Errorf("first column %q", recs[0][0])
		}
	})
}

func TestRejectsCSVKeepsTheDelimiter(t *testing.T) {
	body, err := RejectsCSV([]string{"id", "name"}, []RejectedRow{{Line: 2, Columns: []string{"id"}, Reasons: []string{"empty"}, Values: []string{"", "Ana; B"}}}, ';')
	if err != nil {
		t.Fatal(err)
	}
	want := "\uFEFFhrsync line;hrsync column;hrsync reason;id;name\r\n2;id;empty;;\"Ana; B\"\r\n"
	if string(body) != want {
		t.Errorf("got %q, want %q", body, want)
	}
}

// TestRejectsCSVKeepsValuesByteForByte: a value with a lone CR, an LF or a
// CRLF comes back from the rejects CSV as it went in, whatever the
// delimiter; records end with CRLF; only Neutralize changes a value.
func TestRejectsCSVKeepsValuesByteForByte(t *testing.T) {
	values := []string{"Mid\rdle", "two\nlines", "dos\r\nlines", "\r\n\n\r", `say "hi"` + "\r", " lead", "a;b,c\tz", "=1+1\r\n"}
	for _, delim := range []rune{',', ';', '\t'} {
		t.Run(string(delim), func(t *testing.T) {
			rows := []RejectedRow{{Line: 2, Columns: []string{"firstName"}, Reasons: []string{"bad"}, Values: values}}
			header := make([]string, len(values))
			for i := range header {
				header[i] = fmt.Sprintf("c%d", i)
			}
			body, err := RejectsCSV(header, rows, delim)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(body, []byte("\"\r\n")) {
				t.Errorf("the record does not end with CRLF: %q", body[len(body)-8:])
			}
			got := reportstest.ReadRejects(t, body, delim)
			want := []string{"2", "firstName", "bad"}
			for _, v := range values {
				want = append(want, Neutralize(v)) // "\r\n\n\r" and "=1+1\r\n" get their quote
			}
			if len(got) != 2 || !reflect.DeepEqual(got[1], want) {
				t.Errorf("read back\n%q\nwant\n%q", got, want)
			}
		})
	}
}
