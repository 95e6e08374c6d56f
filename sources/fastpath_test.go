package sources

import (
	"strings"
	"testing"
	"time"
)

// emailSeeds are addresses on both sides of the fast path.
var emailSeeds = []string{
	"jane@company.com", "Jane.Doe@Company.COM", " j.d+tag@mail.example.org ", "o'brien@example.ie",
	"a@b.co", "x@localhost", "x@1.2.3.4", "x@example.123", ".x@example.com", "x.@example.com",
	"x..y@example.com", "x@-example.com", "x@example-.com", "x@exa_mple.com", "x@example..com",
	`"quoted"@example.com`, "Jane <jane@example.com>", "jane@example.com (Jane)", "a@b@c.com",
	"ünï@example.com", "x@exämple.com", "x@[127.0.0.1]", strings.Repeat("l", 65) + "@example.com",
	"x@" + strings.Repeat("d", 64) + ".com", "{weird}|~!@example.com", "a b@example.com", "",
}

func TestPlainAddressAgreesWithCheckEmail(t *testing.T) {
	for _, s := range emailSeeds {
		t.Run(s, func(t *testing.T) {
			e := NormalizeEmail(s)
			if e == "" || !plainAddress(e) {
				return
			}
			if got, reason := checkEmail(e); reason != "" || got != e {
				t.Fatalf("fast path accepts %q, full check says %q, %q", e, got, reason)
			}
		})
	}
	t.Run("the fast path takes the common addresses", func(t *testing.T) {
		for _, e := range []string{"jane@company.com", "j.d+tag@mail.example.org", "pim.vantongeren.e00000001@example.com"} {
			if !plainAddress(e) {
				t.Errorf("%q missed the fast path", e)
			}
		}
	})
}

// FuzzPlainAddress checks that the fast path of CheckEmail accepts nothing
// that the full check (net/mail included) refuses or changes.
func FuzzPlainAddress(f *testing.F) {
	for _, s := range emailSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := NormalizeEmail(s)
		if e == "" || !plainAddress(e) {
			return
		}
		if got, reason := checkEmail(e); reason != "" || got != e {
			t.Fatalf("fast path accepts %q, full check says %q, %q", e, got, reason)
		}
	})
}

// dateSeeds are values on both sides of the ISO fast path.
var dateSeeds = []string{
	"2024-02-29", "2023-02-29", "2024-04-31", "2024-12-31", "1899-12-31", "0000-01-01", "2024-00-10",
	"2024-13-01", "2024-01-00", "2024-1-01", "24-01-01", "2024/01/01", "２０２４-01-01", "+024-01-01",
	"2024-01-01 ", "9999-12-31",
}

func TestParseISODateAgreesWithTimeParse(t *testing.T) {
	for _, s := range dateSeeds {
		t.Run(s, func(t *testing.T) { sameAsTimeParse(t, s) })
	}
}

// FuzzParseISODate checks that the fast path of ParseDate gives the date
// time.Parse gives, and only for values time.Parse accepts.
func FuzzParseISODate(f *testing.F) {
	for _, s := range dateSeeds {
		f.Add(s)
	}
	f.Fuzz(sameAsTimeParse)
}

func sameAsTimeParse(t *testing.T, s string) {
	got, year, ok := parseISODate(s)
	want, err := time.Parse(DefaultDateLayout, s)
	if ok && (err != nil || got != want || got.Location() != time.UTC || year != want.Year()) {
		t.Fatalf("fast path gives %v (year %d) for %q; time.Parse gives %v, %v", got, year, s, want, err)
	}
	if !ok && err == nil && len(s) == 10 && want.Format(DefaultDateLayout) == s {
		t.Fatalf("fast path missed the plain date %q", s)
	}
}

func TestBadCharsFastPath(t *testing.T) {
	for _, tt := range []struct {
		s      string
		spaces bool
		bad    bool
	}{
		{"plain ASCII text, with punctuation!", false, false},
		{"Montréal", false, false},
		{"tab\there", true, false},
		{"tab\there", false, true},
		{"bell\a", true, true},
		{"del\x7f", true, true},
		{"bad \ufffd byte", true, true},
	} {
		t.Run(tt.s, func(t *testing.T) {
			if got := badChars(tt.s, tt.spaces) != ""; got != tt.bad {
				t.Fatalf("badChars(%q, %v) refuses = %v, want %v", tt.s, tt.spaces, got, tt.bad)
			}
		})
	}
}

// scientificByDefinition is looksScientific written plainly, as the first
// release had it.
func scientificByDefinition(s string) bool {
	mant, exp, ok := strings.Cut(strings.ToUpper(s), "E")
	if !ok {
		return false
	}
	exp = strings.TrimLeft(exp, "+-")
	intPart, frac, hasDot := strings.Cut(mant, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac)) && allDigits(exp)
}

func FuzzLooksScientific(f *testing.F) {
	for _, s := range []string{"1.23E+05", "1e5", "1E", "E5", "12.E3", ".5E3", "1E+-+5", "1E5E5", "0012", "E000123", "1.2.3E4", "1e-7", "ABC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := looksScientific(s), scientificByDefinition(s); got != want {
			t.Fatalf("looksScientific(%q) = %v, want %v", s, got, want)
		}
	})
}

func FuzzIsBlank(f *testing.F) {
	for _, s := range []string{"", " ", "\t\n\r\v\f ", " x", "\u00a0", " \u2003 ", "\u0085", "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isBlank(s), strings.TrimSpace(s) == ""; got != want {
			t.Fatalf("isBlank(%q) = %v, want %v", s, got, want)
		}
	})
}
