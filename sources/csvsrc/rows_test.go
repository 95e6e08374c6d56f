package csvsrc

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRows: the records of the given lines come back as the file has them,
// decoded, with the file's delimiter; a record over several lines is found
// by the line it starts on; a malformed one is missing.
func TestRows(t *testing.T) {
	data := []byte("Employee ID;Work Email;First Name;Last Name\n" +
		"1;a@example.com;Ren\xe9;B\n" + // line 2, Windows-1252
		"2;b@example.com;\"two\nlines\";C\n" + // lines 3-4
		"3;c@\"x;D;E\n" + // line 5: a bare quote
		"4;d@example.com;Dee;F\n") // line 6
	o := opts("externalId", "email", "firstName", "lastName")
	got, err := Rows(t.Context(), "c.csv", bytes.NewReader(data), o, map[int]bool{2: true, 3: true, 5: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Delimiter != ';' || !reflect.DeepEqual(got.Header, []string{"Employee ID", "Work Email", "First Name", "Last Name"}) {
		t.Errorf("header %q, delimiter %q", got.Header, got.Delimiter)
	}
	want := map[int][]string{
		2: {"1", "a@example.com", "René", "B"},
		3: {"2", "b@example.com", "two\nlines", "C"},
	}
	if !reflect.DeepEqual(got.Values, want) {
		t.Errorf("values %v, want %v", got.Values, want)
	}
}

// TestRowsKeepLineBreaks: a line break inside a quoted value comes back as
// the file has it (LF, CRLF or a lone CR), in a file whose line ends are
// LF, CRLF or CR only, where encoding/csv would turn every CRLF into LF
// (and the guard every CR of a CR-only file into LF).
func TestRowsKeepLineBreaks(t *testing.T) {
	values := []string{"Mid\rdle", "two\nlines", "dos\r\nlines", "all\r\n\r\n\n\r three", `say "hi"` + "\r"}
	o := opts("externalId", "email", "firstName", "lastName")
	for _, end := range []string{"\n", "\r\n", "\r"} {
		t.Run(strconv.Quote(end), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("Employee ID,Work Email,First Name,Last Name" + end)
			want := map[int][]string{}
			line := 2
			for i, v := range values {
				if end == "\r" && strings.Contains(v, "\n") {
					continue // no LF in a CR-only file: it would decide nothing else
				}
				quoted := `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
				fmt.Fprintf(&b, "%d,p%d@example.com,%s,L%s", i, i, quoted, end)
				want[line] = []string{strconv.Itoa(i), fmt.Sprintf("p%d@example.com", i), v, "L"}
				line += 1 + lineBreaks(v, end == "\r")
			}
			fmt.Fprintf(&b, "99,z@example.com,\"last\rone\",Z") // no line end at the end
			want[line] = []string{"99", "z@example.com", "last\rone", "Z"}
			lines := map[int]bool{}
			for l := range want {
				lines[l] = true
			}
			got, err := Rows(t.Context(), "c.csv", strings.NewReader(b.String()), o, lines)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Values, want) {
				t.Errorf("values\n%#v\nwant\n%#v", got.Values, want)
			}
		})
	}
}

// lineBreaks counts the line breaks of s as encoding/csv counts lines:
// LF, and in a CR-only file also a lone CR.
func lineBreaks(s string, crOnly bool) int {
	n := strings.Count(s, "\n")
	if crOnly {
		n += strings.Count(s, "\r") - strings.Count(s, "\r\n")
	}
	return n
}

func TestSplitRecord(t *testing.T) {
	cases := []struct {
		raw  string
		want []string
	}{
		{"a,b\n", []string{"a", "b"}},
		{"a,b\r\n", []string{"a", "b"}},
		{"a,b\r", []string{"a", "b"}},
		{"a,b", []string{"a", "b"}},
		{"a,\n", []string{"a", ""}},
		{`"x""y","p` + "\r\n" + `q",z` + "\r\n", []string{`x"y`, "p\r\nq", "z"}},
		{`"a"b,c` + "\n", nil},
		{`a"b,c` + "\n", nil},
		{`"open` + "\n", nil},
	}
	for _, c := range cases {
		got, ok := splitRecord(c.raw, ',')
		if ok != (c.want != nil) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitRecord(%q) = %q, %v; want %q", c.raw, got, ok, c.want)
		}
	}
}
