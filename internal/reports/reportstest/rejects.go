// Package reportstest reads the reports hrsync writes as an HR admin's
// tools read them, for tests.
package reportstest

import (
	"strings"
	"testing"
)

// ReadRejects parses a rejects CSV keeping every byte of its quoted fields
// (encoding/csv's reader would turn CRLF into LF): the file as any
// RFC 4180 reader, Excel included, reads it.
func ReadRejects(t testing.TB, body []byte, delim rune) [][]string {
	t.Helper()
	s := strings.TrimPrefix(string(body), "\uFEFF")
	var recs [][]string
	var rec []string
	for len(s) > 0 {
		var field string
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					t.Fatalf("unclosed quote in %q", s)
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			field, s = b.String(), s[i:]
		} else {
			j := strings.IndexFunc(s, func(r rune) bool { return r == delim || r == '\r' || r == '\n' })
			if j < 0 {
				j = len(s)
			}
			field, s = s[:j], s[j:]
		}
		rec = append(rec, field)
		switch {
		case strings.HasPrefix(s, string(delim)):
			s = s[len(string(delim)):]
		case strings.HasPrefix(s, "\r\n"):
			recs, rec, s = append(recs, rec), nil, s[2:]
		default:
			t.Fatalf("after field %q: %q", field, s[:min(len(s), 10)])
		}
	}
	return recs
}
