package directory

import (
	"time"

	"hrsync/model"
)

// Birthday is the form in which a directory keeps a birth date: the month
// and day alone, "--MM-DD" (XML Schema's gMonthDay). hrsync's state keeps no
// year of birth (DESIGN.md, invariant 5); the birthday grant rules need only
// the day. It reads "--MM-DD", a calendar day "YYYY-MM-DD" or an RFC 3339
// dateTime; ok is false for anything else.
func Birthday(s string) (string, bool) {
	if m, d, ok := model.ParseMonthDay(s); ok {
		return model.FormatMonthDay(m, d), true
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return model.FormatMonthDay(t.Month(), t.Day()), true
		}
	}
	return "", false
}
