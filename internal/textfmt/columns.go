package textfmt

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the most columns a line of hrsync's text tables takes, so that
// they read in a terminal of 100 columns. Widths count runes.
const Width = 100

// ellipsis marks text cut short.
const ellipsis = "…"

// Cut returns the first line of s when it has at most n runes, else its
// first n-1 runes and an ellipsis; a first line that is not the whole of s
// ends with an ellipsis too.
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	line, _, more := strings.Cut(s, "\n")
	line = strings.TrimSuffix(line, "\r")
	r := []rune(line)
	if !more && len(r) <= n {
		return line
	}
	return string(r[:min(len(r), n-1)]) + ellipsis
}

// CutMiddle returns the first line of s when it has at most n runes, else
// its start and its end joined by an ellipsis, so that both what a message
// is about and how it ends (the reason, after a long path) stay.
func CutMiddle(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	line = strings.TrimSuffix(line, "\r")
	r := []rune(line)
	if !more && len(r) <= n {
		return line
	}
	if n < 2 {
		return Cut(line, n)
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	if len(r) <= n-1 {
		head, tail = len(r), 0
	}
	return string(r[:head]) + ellipsis + string(r[len(r)-tail:])
}

// Wrap breaks s into lines of at most width runes at spaces, the first
// starting with first and the others with indent (both shorter than
// width); a word longer than a line is split.
func Wrap(s string, width int, first, indent string) []string {
	var lines []string
	cur, empty := []rune(first), true
	for _, word := range strings.Fields(s) {
		w := []rune(word)
		for len(w) > 0 {
			sep := 1
			if empty {
				sep = 0
			}
			switch {
			case len(cur)+sep+len(w) <= width:
				if !empty {
					cur = append(cur, ' ')
				}
				cur, w, empty = append(cur, w...), nil, false
				continue
			case empty:
				take := width - len(cur)
				cur, w = append(cur, w[:take]...), w[take:]
			}
			lines = append(lines, string(cur))
			cur, empty = []rune(indent), true
		}
	}
	if !empty {
		lines = append(lines, string(cur))
	}
	return lines
}

// Table prints rows under a heading row as aligned columns two spaces
// apart, within Width: a column is as wide as its widest cell but at most
// its cap (0: no cap), the last column takes what is left (cut in its
// middle: CutMiddle), and a cell too wide is cut with an ellipsis.
type Table struct {
	// Caps bound the width of each column but the last; 0 leaves one unbounded.
	Caps []int
	rows [][]string
}

// Row adds a row (the first is the heading).
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Rows counts the rows below the heading.
func (t *Table) Rows() int { return max(0, len(t.rows)-1) }

// Print writes the table to w.
func (t *Table) Print(w io.Writer) error {
	widths := t.widths()
	for _, row := range t.rows {
		var b strings.Builder
		for i, cell := range row {
			if i == len(row)-1 {
				b.WriteString(CutMiddle(cell, Width-utf8.RuneCountInString(b.String())))
				break
			}
			cell = Cut(cell, widths[i])
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
		}
		if _, err := fmt.Fprintln(w, Cut(strings.TrimRight(b.String(), " "), Width)); err != nil {
			return fmt.Errorf("print table: %w", err)
		}
	}
	return nil
}

// widths are the columns' widths: the widest cell, capped.
func (t *Table) widths() []int {
	var widths []int
	for _, row := range t.rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for i := range widths {
		if i < len(t.Caps) && t.Caps[i] > 0 {
			widths[i] = min(widths[i], t.Caps[i])
		}
	}
	return widths
}
