package csvsrc

import (
	"bytes"
	"reflect"
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
