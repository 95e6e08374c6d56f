// Package personalization derives the personalization fields of the partner
// API (spec part 2.1: the name, anniversary, birth and work groups) from a
// person's source fields, and computes the sha that identifies one
// personalization. The rules are written down in docs/personalization.md;
// every function here is pure: "now" is always passed in, never read.
package personalization

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"hrsync/api"
)

// Source is a person's source fields as the personalize endpoint receives
// them. Dates are kept as written (an RFC 3339 date-time or a YYYY-MM-DD
// date); the empty string means "not given".
type Source struct {
	FirstName  string
	LastName   string
	Department string
	Location   string
	StartDate  string
	BirthDate  string
}

// ErrUnusable is wrapped by every error Derive returns: the source fields
// cannot be personalized (the API answers status Error).
var ErrUnusable = errors.New("unusable source fields")

// Derive computes the personalization fields of src as of now. Only the
// calendar date of now (in UTC) matters. The anniversary group is present
// when a start date is given, the birth group when a birth date is given.
// It fails, wrapping ErrUnusable, when there is neither a first nor a last
// name, when a date cannot be read or does not exist, or when the birth
// date is after today.
func Derive(src Source, now time.Time) (api.PersonalizationFields, error) {
	var out api.PersonalizationFields
	first, last := Clean(src.FirstName), Clean(src.LastName)
	if first == "" && last == "" {
		return out, fmt.Errorf("name: no first and no last name: %w", ErrUnusable)
	}
	today := DateOf(now.UTC())
	name := api.NameFields{
		First:             &first,
		Last:              &last,
		FirstNameInitials: ptr(Initials(first, false)),
		LastNameInitials:  ptr(Initials(last, true)),
		FirstPossessive:   ptr(Possessive(first)),
	}
	name.Initials = ptr(*name.FirstNameInitials + *name.LastNameInitials)
	out.Name = &name

	if strings.TrimSpace(src.StartDate) != "" {
		d, err := ParseDate(src.StartDate)
		if err != nil {
			return api.PersonalizationFields{}, fmt.Errorf("startDate: %w", err)
		}
		f := DateFieldsOf(d, today)
		out.Anniversary = &f
	}
	if strings.TrimSpace(src.BirthDate) != "" {
		d, err := ParseDate(src.BirthDate)
		if err != nil {
			return api.PersonalizationFields{}, fmt.Errorf("birthDate: %w", err)
		}
		if d.After(today) {
			return api.PersonalizationFields{}, fmt.Errorf("birthDate: after today: %w", ErrUnusable)
		}
		f := DateFieldsOf(d, today)
		out.Birth = &f
	}
	dept, loc := Clean(src.Department), Clean(src.Location)
	if dept != "" || loc != "" {
		out.Work = &api.WorkFields{}
		if dept != "" {
			out.Work.Department = &dept
		}
		if loc != "" {
			out.Work.Location = &loc
		}
	}
	return out, nil
}

// Sha is the hex SHA-256 of the collection id and the canonical form of the
// source fields (see Canonical), so the same collection and source fields
// always give the same sha.
func Sha(collectionID string, src Source) string {
	sum := sha256.Sum256([]byte(collectionID + "\n" + Canonical(src)))
	return hex.EncodeToString(sum[:])
}

// Canonical renders src in a fixed form: a JSON object with the six fields
// in a fixed order, strings cleaned as by Clean, and dates reduced to
// YYYY-MM-DD when they can be read (kept as written, trimmed, otherwise).
// Two requests that derive the same fields have the same canonical form.
func Canonical(src Source) string {
	date := func(s string) string {
		if d, err := ParseDate(s); err == nil {
			return d.Format(time.DateOnly)
		}
		return strings.TrimSpace(s)
	}
	c := struct {
		FirstName  string `json:"firstName"`
		LastName   string `json:"lastName"`
		Department string `json:"department"`
		Location   string `json:"location"`
		StartDate  string `json:"startDate"`
		BirthDate  string `json:"birthDate"`
	}{Clean(src.FirstName), Clean(src.LastName), Clean(src.Department), Clean(src.Location), date(src.StartDate), date(src.BirthDate)}
	b, err := json.Marshal(c)
	if err != nil { // a struct of strings always marshals
		panic(fmt.Sprintf("personalization: marshal canonical form: %v", err))
	}
	return string(b)
}

// Clean puts a string in Unicode NFC, trims it and collapses runs of
// white space to one space.
func Clean(s string) string {
	return strings.Join(strings.Fields(norm.NFC.String(s)), " ")
}

// ParseDate reads a date given as an RFC 3339 date-time or as YYYY-MM-DD and
// returns its calendar date as written (the time of day and the offset are
// ignored), at midnight UTC. A date that does not exist (2023-02-30) or
// cannot be read fails, wrapping ErrUnusable.
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("not a date (want RFC 3339 or YYYY-MM-DD): %w", ErrUnusable)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

// DateOf returns t's calendar date, in t's own location, at midnight UTC.
func DateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// DateFieldsOf derives the anniversary or birth group of date d as of today
// (both calendar dates).
func DateFieldsOf(d, today time.Time) api.DateFields {
	years, months := Elapsed(d, today)
	month, year := float64(d.Month()), float64(d.Year())
	yrs := float64(years)
	z := ZodiacOf(d.Month(), d.Day())
	return api.DateFields{
		Month:        &month,
		MonthPadded:  ptr(fmt.Sprintf("%02d", int(d.Month()))),
		Year:         &year,
		Decade:       ptr(fmt.Sprintf("%ds", d.Year()-d.Year()%10)),
		Years:        &yrs,
		YearsPadded:  ptr(fmt.Sprintf("%02d", years)),
		Hundreds:     ptr(fmt.Sprintf("%ds", d.Year()-d.Year()%100)),
		Zodiac:       &z,
		Ordinal:      ptr(Ordinal(years)),
		Elapsed:      ptr(ElapsedText(years, months)),
		ElapsedYears: ptr(plural(years, "year")),
	}
}

// Elapsed returns the whole years and the whole months beyond them from
// date from to date to (both calendar dates). A month is complete on the
// same day of a later month; when that day does not exist in the later
// month (the 31st, or 29 February) it is complete on the first day of the
// following month. A date after to gives 0, 0.
func Elapsed(from, to time.Time) (years, months int) {
	if from.After(to) {
		return 0, 0
	}
	total := (to.Year()-from.Year())*12 + int(to.Month()) - int(from.Month())
	if to.Day() < from.Day() {
		total--
	}
	return total / 12, total % 12
}

// ElapsedText renders years and months as "5 years 3 months", "1 year",
// "2 months" or "0 months".
func ElapsedText(years, months int) string {
	switch {
	case years == 0:
		return plural(months, "month")
	case months == 0:
		return plural(years, "year")
	default:
		return plural(years, "year") + " " + plural(months, "month")
	}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Ordinal renders n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th,
// 13th, 21st, 102nd, 111th.
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// ZodiacOf returns the tropical (western) sign of a month and day, with the
// boundaries of docs/personalization.md (Capricorn runs 22 December to
// 19 January).
func ZodiacOf(month time.Month, day int) api.Zodiac {
	// The first day of the sign that starts in each month, January first; a
	// date before it belongs to the sign that started the month before.
	starts := [12]struct {
		day  int
		sign api.Zodiac
	}{
		{20, api.Aquarius}, {19, api.Pisces}, {21, api.Aries}, {20, api.Taurus},
		{21, api.Gemini}, {21, api.Cancer}, {23, api.Leo}, {23, api.Virgo},
		{23, api.Libra}, {23, api.Scorpio}, {22, api.Sagittarius}, {22, api.Capricorn},
	}
	i := int(month) - 1
	if day >= starts[i].day {
		return starts[i].sign
	}
	return starts[(i+11)%12].sign
}

// isParticle tells whether a part of a last name is a name particle that
// initials skip ("van der Berg" gives B). Only lower-case particles count:
// "Van Dyke" gives VD.
func isParticle(part string) bool {
	switch part {
	case "al", "bin", "binti", "da", "das", "de", "del", "della", "der", "des", "di", "do",
		"dos", "du", "el", "ibn", "la", "le", "lo", "ten", "ter", "van", "von", "y", "zu":
		return true
	}
	return false
}

// isElision tells whether a lower-case elided particle written before an
// apostrophe ("d'Artagnan", "l'Estrange") is one that initials skip.
func isElision(prefix string) bool {
	return prefix == "d" || prefix == "l" || prefix == "dell"
}

// Initials returns the upper-cased first letter of each part of a name,
// where parts are separated by spaces and hyphens ("Jean-Luc" gives JL).
// For a last name (surname true), lower-case particles are skipped
// ("van der Berg" gives B, "de la Cruz-Ortiz" gives CO), as is a lower-case
// elided particle before an apostrophe ("d'Artagnan" gives A); "O'Brien"
// gives O. When every part is a particle, the first letter of the name is
// used. Accents are kept ("Émile" gives É).
func Initials(name string, surname bool) string {
	var b strings.Builder
	var firstLetter rune
	for _, word := range strings.Fields(name) {
		for _, part := range strings.Split(word, "-") {
			if firstLetter == 0 {
				firstLetter = leadingLetter(part)
			}
			if surname {
				if isParticle(part) {
					continue
				}
				if i := strings.IndexAny(part, "'’"); i > 0 && isElision(part[:i]) {
					_, size := utf8.DecodeRuneInString(part[i:])
					part = part[i+size:]
				}
			}
			if r := leadingLetter(part); r != 0 {
				b.WriteRune(unicode.ToUpper(r))
			}
		}
	}
	if b.Len() == 0 && firstLetter != 0 {
		b.WriteRune(unicode.ToUpper(firstLetter))
	}
	return b.String()
}

func leadingLetter(s string) rune {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return r
		}
	}
	return 0
}

// Possessive returns the English possessive of a first name: "Anna's", and
// "James'" for a name ending in s. The empty name gives "".
func Possessive(first string) string {
	switch {
	case first == "":
		return ""
	case strings.HasSuffix(first, "s") || strings.HasSuffix(first, "S"):
		return first + "'"
	default:
		return first + "'s"
	}
}

func ptr[T any](v T) *T { return &v }
