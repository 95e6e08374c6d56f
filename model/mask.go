package model

import (
	"strings"
	"unicode/utf8"
)

// MaskEmail hides an e-mail address in a message, keeping only its shape:
// the first character of the local part and of the domain, and the
// top-level domain ("jane.doe@example.com" gives "j***@e***.com"). A value
// without "@" is masked whole ("***").
func MaskEmail(s string) string {
	local, domain, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok || local == "" {
		return "***"
	}
	var b strings.Builder
	b.WriteString(firstRune(local))
	b.WriteString("***@")
	host, tld := domain, ""
	if dot := strings.LastIndexByte(domain, '.'); dot >= 0 {
		host, tld = domain[:dot], domain[dot:]
	}
	if host != "" {
		b.WriteString(firstRune(host))
		b.WriteString("***")
	}
	if utf8.RuneCountInString(tld) <= 8 {
		b.WriteString(tld)
	}
	return b.String()
}

// MaskDate hides a date in a message, keeping its first two characters and
// its layout: every other digit becomes "*" ("1987-06-05" gives
// "19**-**-**", "05/06/1987" gives "05/**/****"). Only the first 40
// characters are kept.
func MaskDate(s string) string {
	const maxRunes = 40
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(s) {
		switch {
		case n >= maxRunes:
			b.WriteString("…")
			return b.String()
		case n < 2:
			b.WriteRune(r)
		case r >= '0' && r <= '9', r > utf8.RuneSelf || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
			b.WriteByte('*')
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

func firstRune(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	return s[:size]
}
