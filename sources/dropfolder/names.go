package dropfolder

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DisplayName is a file name as hrsync prints it in every output (the last
// line, reports, errors, logs, the run record): the name itself when every
// character is printable and none is a double quote or a backslash; else
// the name quoted and escaped as a Go string ("a\nb.csv"), so that a name
// with a newline, another control character, an invisible or a
// direction-changing character, or bytes that are not UTF-8, can never
// forge or hide a line. A display name starts with a double quote exactly
// when it is quoted; RawName takes it back.
func DisplayName(name string) string {
	if plainName(name) {
		return name
	}
	return strconv.Quote(name)
}

// plainName tells whether name prints as it is: valid UTF-8, every rune
// printable (unicode.IsPrint: letters, marks, numbers, punctuation,
// symbols and the ASCII space), no double quote, no backslash.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			return plainUnicode(name[i:])
		}
		if c < ' ' || c == 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return name != ""
}

// plainUnicode is plainName past the ASCII fast path.
func plainUnicode(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// RawName is the file name a DisplayName stands for: unquoted when it is
// quoted, else itself.
func RawName(display string) string {
	if !strings.HasPrefix(display, `"`) {
		return display
	}
	raw, err := strconv.Unquote(display)
	if err != nil {
		return display
	}
	return raw
}
