package sources

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// valueSeeds are values on both sides of the plain-value fast paths.
var valueSeeds = []string{
	"", " ", "E00000001", " E1", "E1 ", "e1\t", "Montréal", "1.23E+05", "0012", "a\x7f", "tab\there", "nul\x00",
	"bad \ufffd", "bad \xff byte", "ＡＢＣ", "ﬁle", "Ωmega", "Jane", "  padded  ", "\u00a0nbsp", "zero\u200bwidth",
	strings.Repeat("x", MaxIDLength), strings.Repeat("x", MaxIDLength+1), strings.Repeat("é", MaxIDLength),
}

// checkIDByDefinition is checkID without its fast path.
func checkIDByDefinition(s string, allowNonLatin bool) (string, string) {
	id := NormalizeID(s)
	if id == "" {
		return "", ""
	}
	if utf8.RuneCountInString(id) > MaxIDLength {
		return "", fmt.Sprintf("externalId is longer than %d characters", MaxIDLength)
	}
	if reason := checkKey(id, allowNonLatin); reason != "" {
		return "", "externalId " + reason
	}
	if looksScientific(id) {
		return "", fmt.Sprintf("externalId %s looks like a number a spreadsheet rewrote in scientific notation; export the column as text", quoteValue(id))
	}
	return id, ""
}

// checkTextByDefinition is checkText without its fast path.
func checkTextByDefinition(s string) (string, string) {
	s = strings.TrimSpace(s)
	if reason := badCharsByDefinition(s, true); reason != "" {
		return "", "value " + reason
	}
	return s, ""
}

// badCharsByDefinition is badChars as its first release wrote it.
func badCharsByDefinition(s string, spaces bool) string {
	if strings.ContainsRune(s, utf8.RuneError) {
		return "holds a character that could not be decoded: check the file's encoding"
	}
	if strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) && (!spaces || (r != '\n' && r != '\r' && r != '\t'))
	}) {
		return "holds control characters"
	}
	return ""
}

// checkEmailByDefinition is Validator.checkEmail without its fast path.
func checkEmailByDefinition(s string, allowNonLatin bool) (string, string) {
	e, reason := CheckEmail(s)
	if reason == "" && e != "" {
		if why := checkKey(e, allowNonLatin); why != "" {
			return "", "e-mail " + why
		}
	}
	return e, reason
}

// sameChecks compares each check that has a fast path with its
// definition, on s.
func sameChecks(t *testing.T, s string) {
	t.Helper()
	for _, nonLatin := range []bool{false, true} {
		if id, why := checkID(s, nonLatin); true {
			if wid, wwhy := checkIDByDefinition(s, nonLatin); id != wid || why != wwhy {
				t.Fatalf("checkID(%q, %v) = %q, %q; want %q, %q", s, nonLatin, id, why, wid, wwhy)
			}
		}
		v := &Validator{nonLatin: nonLatin}
		e, why := v.checkEmail(s)
		if we, wwhy := checkEmailByDefinition(s, nonLatin); e != we || why != wwhy {
			t.Fatalf("checkEmail(%q) with allowNonLatin %v = %q, %q; want %q, %q", s, nonLatin, e, why, we, wwhy)
		}
	}
	if txt, why := checkText(s); true {
		if wtxt, wwhy := checkTextByDefinition(s); txt != wtxt || why != wwhy {
			t.Fatalf("checkText(%q) = %q, %q; want %q, %q", s, txt, why, wtxt, wwhy)
		}
	}
	for _, spaces := range []bool{false, true} {
		if got, want := badChars(s, spaces), badCharsByDefinition(s, spaces); got != want {
			t.Fatalf("badChars(%q, %v) = %q, want %q", s, spaces, got, want)
		}
	}
	if plainValue(s) && (strings.TrimSpace(s) != s || nfc(s) != s || checkKey(s, false) != "") {
		t.Fatalf("plainValue(%q) but trimming, NFC or checkKey would change or refuse it", s)
	}
	if got, want := lowerASCII(s), strings.ToLower(s); plainValue(s) && got != want {
		t.Fatalf("lowerASCII(%q) = %q, want %q", s, got, want)
	}
}

func TestFastChecksAgreeWithDefinitions(t *testing.T) {
	for _, s := range append(append(valueSeeds, emailSeeds...), dateSeeds...) {
		t.Run(s, func(t *testing.T) { sameChecks(t, s) })
	}
	t.Run("common values take the fast paths", func(t *testing.T) {
		for _, s := range []string{"E00000001", "pim.vantongeren.e00000001@example.com", "Jane.Doe@Company.COM", "Operations", ""} {
			if !plainValue(s) {
				t.Errorf("%q missed the fast path", s)
			}
		}
		if _, ok := plainEmail("Jane.Doe@Company.COM"); !ok {
			t.Error("a plain address with capitals missed the fast path")
		}
	})
}

// FuzzFastChecks checks that the fast paths of checkID, checkEmail,
// checkText and badChars give what their definitions give.
func FuzzFastChecks(f *testing.F) {
	for _, s := range append(append(valueSeeds, emailSeeds...), dateSeeds...) {
		f.Add(s)
	}
	f.Fuzz(sameChecks)
}

func TestIsAtextAsRFC5322(t *testing.T) {
	for c := range 256 {
		want := isAlnum(byte(c)) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", byte(c)) >= 0
		if got := isAtext(byte(c)); got != want {
			t.Errorf("isAtext(%q) = %v, want %v", rune(c), got, want)
		}
	}
}

// TestDaysFromCivilAsTimeDate compares every day of the years ISO dates
// can write with time.Date.
func TestDaysFromCivilAsTimeDate(t *testing.T) {
	for y := range 10000 {
		for m := 1; m <= 12; m++ {
			n := daysIn(y, m)
			if want := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(); n != want {
				t.Fatalf("daysIn(%d, %d) = %d, want %d", y, m, n, want)
			}
			for d := 1; d <= n; d++ {
				want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
				if got := time.Unix(daysFromCivil(y, m, d)*secondsPerDay, 0).UTC(); got != want {
					t.Fatalf("%04d-%02d-%02d: got %v, want %v", y, m, d, got, want)
				}
			}
		}
	}
}

// FuzzMinAgeSpan checks the shortcut of checkDates: apart by minAgeSpan or
// more, a start date is never before the birth date plus MinAgeAtStart
// years.
func FuzzMinAgeSpan(f *testing.F) {
	for _, s := range [][2]int64{{0, 5113}, {0, 5114}, {0, 5124}, {-10957, 5000}, {11016, 5114}, {11016, 5113}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, birthDay, apart int64) {
		if birthDay < -25567 || birthDay > 2932896 || apart < 0 || apart > 100*366 {
			return // 1900 to 9999, up to a century apart
		}
		birth := time.Unix(birthDay*secondsPerDay, 0).UTC()
		start := birth.AddDate(0, 0, int(apart))
		if start.Sub(birth) >= minAgeSpan && start.Before(birth.AddDate(MinAgeAtStart, 0, 0)) {
			t.Fatalf("birth %v, start %v: apart by minAgeSpan, yet too young", birth, start)
		}
	})
}
