package sources

import (
	"strings"
	"time"
)

// The fast paths of the checks: each takes the common case (printable
// ASCII, ISO dates) in one pass, decides exactly as the full check would,
// and leaves anything else to it. fastpath_test.go holds each against the
// full check.

// plainValue tells whether s is printable ASCII with no space at either
// end: a value that trimming (strings.TrimSpace) and normalization (NFC,
// lower case aside) leave as it is, in which the checks of characters
// (badChars, checkKey) find nothing to refuse.
func plainValue(s string) bool {
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// plainEmail is the fast path of Validator.checkEmail: for a value that
// is a plain address (plainAddress: ASCII letters, digits and the atom
// characters only, so nothing to trim or normalize but the case), or "",
// it returns the address lower-cased and true; CheckEmail and checkKey
// would accept it so. Anything else says false.
func plainEmail(s string) (string, bool) {
	if s == "" {
		return "", true
	}
	if !plainAddress(s) {
		return "", false
	}
	return lowerASCII(s), true
}

// lowerASCII lower-cases the ASCII letters of s, as strings.ToLower does
// for ASCII; s itself when it has no upper-case letter.
func lowerASCII(s string) string {
	upper := -1
	for i := range len(s) {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			upper = i
			break
		}
	}
	if upper < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:upper])
	for i := upper; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parseISODate is a fast path of time.Parse(DefaultDateLayout, s) for the
// common case: it accepts only what time.Parse accepts (four-digit year,
// two-digit month and day, a day that exists), with the same date (== to
// time.Parse's: UTC midnight) and its year, and says !ok for anything
// else, which the caller then hands to time.Parse. The date is built from
// its count of days, without the normalization of time.Date.
func parseISODate(s string) (t time.Time, year int, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, 0, false
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := range len(p) {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
			n = n*10 + int(p[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return time.Time{}, 0, false
	}
	return time.Unix(daysFromCivil(y, m, d)*secondsPerDay, 0).UTC(), y, true
}

const secondsPerDay = 24 * 60 * 60

// daysIn returns the number of days of month m (1-12) of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days from 1970-01-01 to the date y-m-d of the
// proleptic Gregorian calendar (m 1-12, d a day of the month), as
// time.Date counts them.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y-- // the year starts in March: the leap day is its last
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400                     // year of the era, 0-399
	doy := (153*((m+9)%12)+2)/5 + d - 1    // day of the year from March 1st
	doe := yoe*365 + yoe/4 - yoe/100 + doy // day of the era
	return int64(era)*146097 + int64(doe) - 719468
}

// plainAddress is a fast path of CheckEmail for the common case: it
// accepts only a plain ASCII address that every check of CheckEmail
// accepts (net/mail included, with the address unchanged), and says false
// for anything else, which then goes through those checks. A local part of
// atoms joined by single dots, at most 64 bytes; a domain of two or more
// labels of letters, digits and inner hyphens, the last one not numeric.
func plainAddress(e string) bool {
	at := strings.IndexByte(e, '@')
	if at < 1 || at > 64 || len(e) > 254 {
		return false
	}
	local, domain := e[:at], e[at+1:]
	prev := byte('.') // a leading dot is refused
	for i := range len(local) {
		c := local[i]
		switch {
		case c == '.':
			if prev == '.' {
				return false
			}
		case !isAtext(c):
			return false
		}
		prev = c
	}
	if prev == '.' {
		return false
	}
	labels, start, numeric := 0, 0, true
	for i := 0; i <= len(domain); i++ {
		if i < len(domain) && domain[i] != '.' {
			if c := domain[i]; c != '-' && !isAlnum(c) {
				return false
			}
			continue
		}
		l := domain[start:i]
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		labels++
		numeric = allDigits(l)
		start = i + 1
	}
	return labels >= 2 && !numeric
}

// isAtext tells whether c is an atom character of RFC 5322 (ASCII).
func isAtext(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~':
		return true
	}
	return false
}

// isAlnum tells whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
