package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Day is 24 hours, the unit of the "d" suffix in durations.
const Day = 24 * time.Hour

// Duration is a time.Duration read from YAML as a Go duration string
// ("30s", "15m", "1h30m") or as whole days with a "d" suffix ("30d"),
// optionally followed by a Go duration ("1d12h"). A bare 0 is zero.
// A value that does not parse is kept and reported by validation with its
// field path, so that every problem of a file is listed at once.
type Duration struct {
	time.Duration
	invalid string // the text that did not parse, "" when valid
}

// maxDays is the most days a time.Duration holds.
const maxDays = uint64(1<<63-1) / uint64(Day)

// D builds a Duration from a time.Duration.
func D(d time.Duration) Duration { return Duration{Duration: d} }

// ParseDuration parses a Go duration with an optional leading "<n>d" part.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if s == "0" {
		return 0, nil
	}
	neg := false
	body := s
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	var days time.Duration
	if i := strings.IndexByte(body, 'd'); i >= 0 {
		n, err := strconv.ParseUint(body[:i], 10, 31)
		if err != nil || i == 0 {
			return 0, fmt.Errorf("invalid duration %q: days must be a whole number before \"d\"", s)
		}
		if n > maxDays {
			return 0, fmt.Errorf("invalid duration %q: at most %d days", s, maxDays)
		}
		days = time.Duration(n) * Day
		body = body[i+1:]
	}
	var rest time.Duration
	if body != "" {
		var err error
		rest, err = time.ParseDuration(body)
		if err != nil || rest < 0 || strings.ContainsAny(body, "+-") {
			return 0, fmt.Errorf("invalid duration %q: use a Go duration such as 30s, 15m, 2h, or days such as 7d", s)
		}
	} else if days == 0 && !strings.HasSuffix(s, "d") {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	total := days + rest
	if total < days {
		return 0, fmt.Errorf("invalid duration %q: too long", s)
	}
	if neg {
		total = -total
	}
	return total, nil
}

// String prints whole days as "<n>d" and anything else as a Go duration, so
// that the result parses back to the same value.
func (d Duration) String() string {
	if d.invalid != "" {
		return d.invalid
	}
	return formatDuration(d.Duration)
}

func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d > 0 && d%Day == 0 {
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	}
	return d.String()
}

// Valid reports whether the value read from YAML parsed.
func (d Duration) Valid() bool { return d.invalid == "" }

// UnmarshalYAML reads a duration string. A value that does not parse is kept
// for validation to report, so it never stops the rest of the file loading.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	v, perr := ParseDuration(s)
	*d = Duration{Duration: v}
	if perr != nil {
		*d = Duration{invalid: s}
	}
	return nil
}

// MarshalYAML writes the duration in the form String gives.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText writes the duration in the form String gives.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
