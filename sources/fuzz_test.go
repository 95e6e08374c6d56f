package sources

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseDate checks that parsing any value with any layout never panics
// and ends in exactly one of: no date (blank), a date at UTC midnight from
// 1900 on, or a reason.
func FuzzParseDate(f *testing.F) {
	for _, s := range [][2]string{
		{"03/04/2021", "01/02/2006"},
		{"31.12.1990", "02.01.2006"},
		{"2021-02-29", DefaultDateLayout},
		{"1/2/2006", "1/2/2006"},
		{"2021-03-04T23:30:00+02:00", time.RFC3339},
		{"Jan 2, 99", "Jan 2, 06"},
		{"", "01/02/2006"},
		{"0000-00-00", DefaultDateLayout},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, value, layout string) {
		got, reason := ParseDate(value, layout)
		switch {
		case strings.TrimSpace(value) == "":
			if !got.IsZero() || reason != "" {
				t.Fatalf("blank value gave %v, %q", got, reason)
			}
		case reason != "":
			if !got.IsZero() {
				t.Fatalf("a rejected value also gave the date %v", got)
			}
		default:
			if got.Location() != time.UTC || got.Hour() != 0 || got.Minute() != 0 || got.Second() != 0 || got.Nanosecond() != 0 {
				t.Fatalf("date %v is not UTC midnight", got)
			}
			if got.Year() < 1900 {
				t.Fatalf("date %v before 1900 accepted", got)
			}
		}
	})
}
