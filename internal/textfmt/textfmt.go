// Package textfmt holds the small text formatters that every text output
// of hrsync shares (the commands' and the jobs' reports and plans), so that
// an amount, a list or a set of counts reads the same everywhere.
package textfmt

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Money renders an amount of money as every text output does: two
// decimals, a point, no thousands separator (1102475.00).
func Money(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// ListLimit is how many people of each kind a text plan names.
const ListLimit = 20

// List prints up to limit items as indented lines under a heading
// ("  new (3):"), then "and N more" when there are more; nothing when n is
// 0. item returns the i-th item's text.
func List(w io.Writer, heading string, n, limit int, item func(i int) string) {
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "  %s (%d):\n", heading, n)
	shown := min(n, limit)
	for i := range shown {
		fmt.Fprintf(w, "    %s\n", item(i))
	}
	if n > shown {
		fmt.Fprintf(w, "    and %d more\n", n-shown)
	}
}

// Counts renders named counts, zeros included, as "a=1 b=2", sorted by name.
func Counts(c map[string]int) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, " ")
}

// Plural renders n with the singular or plural noun: "1 cycle", "2 cycles".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
