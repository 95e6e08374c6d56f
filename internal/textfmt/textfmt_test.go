package textfmt

import (
	"fmt"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	item := func(i int) string { return fmt.Sprint("E", i) }
	var b strings.Builder
	List(&b, "new", 0, 2, item)
	List(&b, "changed", 2, 2, item)
	List(&b, "departed", 5, 2, item)
	want := "  changed (2):\n    E0\n    E1\n  departed (5):\n    E0\n    E1\n    and 3 more\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestMoney(t *testing.T) {
	for v, want := range map[float64]string{1102475: "1102475.00", 0: "0.00", 12.345: "12.35", -3.5: "-3.50", 1e21: "1000000000000000000000.00"} {
		if got := Money(v); got != want {
			t.Errorf("money(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestCutAndWrap(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"ab\ncd", 10, "ab…"}, {"ééééé", 4, "ééé…"}, {"x", 0, ""}} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcdefgh", 5, "ab…gh"}, {"abcdefgh", 6, "ab…fgh"}, {"ab\ncd", 5, "ab…"}, {"abcd", 1, "…"}} {
		if got := CutMiddle(c.in, c.n); got != c.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	got := Wrap("one two three fourfivesixseveneight nine", 10, "- ", "  ")
	want := []string{"- one two", "  three", "  fourfive", "  sixseven", "  eight", "  nine"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
}
