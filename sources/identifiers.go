package sources

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// isPrintableASCII tells whether s holds printable ASCII only: the fast
// path of the key checks, which then have nothing to refuse or normalize.
func isPrintableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// nfc returns s in Unicode normalization form C; ASCII is returned as is,
// without allocating.
func nfc(s string) string {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// invisible tells whether r is a character that cannot be seen or that
// changes how others show: a control (Cc), format (Cf: zero-width space,
// byte order mark, soft hyphen...), private-use or surrogate code point, a
// default-ignorable one or a variation selector, or a space other than
// the ASCII one.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		(unicode.IsSpace(r) && r != ' ')
}

// scriptOf names the script of a letter, digit or mark: "" for the
// scripts every writing shares (Common, Inherited), "Japanese" for Han,
// Hiragana and Katakana.
func scriptOf(r rune) string {
	switch {
	case r < utf8.RuneSelf || unicode.Is(unicode.Latin, r):
		if r < utf8.RuneSelf && !unicode.IsLetter(r) {
			return ""
		}
		return "Latin"
	case unicode.In(r, unicode.Common, unicode.Inherited):
		return ""
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana): // Japanese mixes them
		return "Japanese"
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return "Unknown"
}

// checkKey checks the characters of a normalized key (externalId or
// e-mail) and returns why it is refused, or "". It never quotes the key:
// it names the character by its code point. A printable ASCII key takes
// the fast path.
func checkKey(s string, allowNonLatin bool) string {
	if isPrintableASCII(s) {
		return ""
	}
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			return "holds a character that could not be decoded: check the file's encoding"
		case invisible(r):
			return fmt.Sprintf("holds an invisible, format or control character (U+%04X) at character %d", r, utf8.RuneCountInString(s[:i])+1)
		}
	}
	if !norm.NFKC.IsNormalString(s) {
		return "holds a compatibility character that looks like another (a full-width letter, a ligature, a superscript...)"
	}
	return checkScripts(s, allowNonLatin)
}

// checkScripts refuses a key whose letters mix scripts, or, unless
// allowNonLatin, whose letters are not all Latin.
func checkScripts(s string, allowNonLatin bool) string {
	first := ""
	for _, r := range s {
		sc := scriptOf(r)
		switch {
		case sc == "":
			continue
		case !allowNonLatin && sc != "Latin":
			return fmt.Sprintf("holds a letter of the %s script (U+%04X), which may look like a Latin one; "+
				"set identifiers.allowNonLatin for keys written in another script", sc, r)
		case first == "":
			first = sc
		case sc != first:
			return fmt.Sprintf("mixes the %s and %s scripts (U+%04X): letters that look alike would make two people", first, sc, r)
		}
	}
	return ""
}

// trimKey trims a key and puts it in normalization form C.
func trimKey(s string) string { return nfc(strings.TrimSpace(s)) }
