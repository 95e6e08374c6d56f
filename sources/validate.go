package sources

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"hrsync/model"
)

// Limits of the date checks.
const (
	// MinAgeAtStart is the youngest age, in years, a person may have on
	// their start date.
	MinAgeAtStart = 14
	// MaxStartAhead is how far in the future a start date may lie.
	MaxStartAhead = 2 * 365 * 24 * time.Hour
	// MaxIDLength bounds an externalId.
	MaxIDLength = 128
)

// Row is one record of an export before validation.
type Row struct {
	// Line is the 1-based physical line of the row's start (CSV) or the
	// 1-based row number (SQL).
	Line int
	// Text holds the raw value of each mapped field; unmapped fields and
	// SQL NULLs are "".
	Text [NumFields]string
	// Date holds native date values (SQL DATE or DATETIME columns) of date
	// fields; it wins over Text when not zero.
	Date [NumFields]time.Time
	// Problem, when set, rejects the whole row (a malformed CSV record);
	// its fields are then not looked at.
	Problem string
	// Blank is set when every value of the record, mapped or not, is
	// empty: such a row (a spreadsheet's trailing ",,,") is skipped.
	Blank bool
}

// Stats counts the rows of one export.
type Stats struct {
	Rows     int `json:"rows"`     // data rows read, blank rows excluded
	Accepted int `json:"accepted"` // rows accepted (and not taken back)
	Rejected int `json:"rejected"` // rows with at least one rejection
	Skipped  int `json:"skipped"`  // blank rows (every field empty), ignored
	// Corrections says the export is a rejects report dropped again (its
	// header has CorrectionsColumn): it lists only the rows an HR admin
	// fixed, so it says nothing about who left.
	Corrections bool `json:"corrections,omitempty"`
}

// CorrectionsColumn is the first column of a rejects report (the line the
// row had in the export it was rejected from). An export whose header has
// it is a file of corrections (Stats.Corrections).
const CorrectionsColumn = "hrsync line"

// Handler receives the rows of one export from Source.Read, one call at a
// time, in row order.
//
// A duplicate externalId or e-mail rejects every row that holds it, the
// first one included, since nobody can tell which row is right. The read
// makes one pass, so the first row of a key is known to be a duplicate
// only when a later row repeats the key: that first row was accepted
// already. After the last row, Read takes each such row back with Retract
// and then hands its rejections to Reject. Until Read returns, an accepted
// row is therefore provisional.
type Handler struct {
	// Accept gets each row that passed every check.
	Accept func(model.Person) error
	// AcceptHashed, when set, gets in place of Accept each row that passed
	// every check in Run, with the hashes Run computed of it on its
	// workers: a caller that compares rows by their hashes need not
	// compute them again. A caller that sets it sets Accept too, for the
	// sources that hand their rows over without Run.
	AcceptHashed func(model.Person, Hashes) error
	// AcceptRow, when set, gets in place of AcceptHashed (and Accept) each
	// row that passed every check in Run, as AcceptHashed would, but by
	// pointer: the person is Run's, valid only during the call, and the
	// ordered stage of Run need not copy it for a caller that looks at a
	// few of its fields. Its strings are valid only during the call too: a
	// reader may lend them from its own buffers, which it then reuses (the
	// CSV reader does), so a caller that keeps the person, or any of its
	// strings, copies it (strings.Clone). The Keys' First gets the same
	// lent person.
	AcceptRow func(*model.Person, Hashes) error
	// Reject gets each problem of a rejected row.
	Reject func(model.Rejection) error
	// Retract takes back the accepted row of the line; nil when the caller
	// keeps nothing of accepted rows.
	Retract func(line int) error
	// Keys, when set, is where the read records the keys to find the
	// duplicates: a caller that indexes the keys anyway can spare the read
	// its own maps. Nil means NewKeys.
	Keys Keys
}

// ErrChanged reports that an export changed while it was read: a file
// written to again (its size or modification time moved).
var ErrChanged = errors.New("export changed while it was read")

// Source is an export both kinds of source satisfy.
type Source interface {
	// Name is the source named in rejections: a file name or "sql:<name>".
	Name() string
	// Read reads the whole export once and hands its rows to h (see
	// Handler). An error from h stops the read and is returned. Any other
	// error is a problem with the export as a whole (unreadable, missing
	// columns) and means no result is usable.
	Read(ctx context.Context, h Handler) (Stats, error)
}

// Validator checks rows of one export and turns them into model.Person
// values. It holds no state that a check changes, so workers may share it.
type Validator struct {
	source   string
	columns  [NumFields]string // configured column names; "" = not mapped
	layouts  [NumFields]string
	required [NumFields]bool
	today    time.Time
	// latestStart is the last start date accepted: today plus
	// MaxStartAhead.
	latestStart time.Time
	// maxValue, maxBalance and nonLatin are the limits of Mapping.
	maxValue   int
	maxBalance float64
	nonLatin   bool
}

// NewValidator makes a Validator for the export named source, read with
// mapping m; now is the time the dates are checked against.
func NewValidator(source string, m Mapping, now time.Time) (*Validator, error) {
	if errs := m.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("mapping: %w", errors.Join(errs...))
	}
	today := dateOf(now)
	v := &Validator{
		source:      source,
		today:       today,
		latestStart: today.Add(MaxStartAhead),
		maxValue:    m.ValueMax(),
		maxBalance:  m.BalanceMax(),
		nonLatin:    m.Identifiers.AllowNonLatin,
	}
	for f := range NumFields {
		v.columns[f] = strings.TrimSpace(m.Columns[f.String()])
		if f.IsDate() {
			v.layouts[f] = m.Layout(f)
		}
	}
	for _, f := range m.RequiredFields() {
		v.required[f] = true
	}
	return v, nil
}

// Column returns the configured column name of a field ("" if unmapped).
func (v *Validator) Column(f Field) string { return v.columns[f] }

// Source returns the source name used in rejections.
func (v *Validator) Source() string { return v.source }

// isBlank tells whether s is empty once trimmed, as strings.TrimSpace would
// trim it; it returns at the first byte that is not an ASCII space.
func isBlank(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
		case c < utf8.RuneSelf:
			return false
		default:
			return strings.TrimSpace(s[i:]) == ""
		}
	}
	return true
}

// NormalizeID trims an externalId and puts it in Unicode normalization
// form C (ASCII is left as it is). IDs are text: leading zeros stay.
func NormalizeID(s string) string { return trimKey(s) }

// NormalizeEmail trims and lower-cases an e-mail address, in Unicode
// normalization form C.
func NormalizeEmail(s string) string { return nfc(strings.ToLower(strings.TrimSpace(s))) }

// Check validates one row on its own: every check but the duplicate keys,
// which need the rows before it (see Run). It returns the row's
// rejections, none when the row is good, and the person: whole for a good
// row; for a rejected one only its valid keys (ExternalID, Email), so that
// later rows repeating them are still found.
func (v *Validator) Check(r *Row) (model.Person, []model.Rejection) {
	var rej []model.Rejection
	add := func(f Field, reason string) {
		col := ""
		if f >= 0 {
			col = v.columns[f]
		}
		rej = append(rej, model.Rejection{Source: v.source, Line: r.Line, Field: col, Reason: reason})
	}
	if r.Problem != "" {
		add(-1, r.Problem)
		return model.Person{}, rej
	}
	p := model.Person{Line: r.Line}
	for f := range NumFields {
		if v.columns[f] == "" {
			continue
		}
		if v.required[f] && isBlank(r.Text[f]) && r.Date[f].IsZero() {
			add(f, "required value is empty")
			continue
		}
		if t := r.Text[f]; len(t) > v.maxValue && utf8.RuneCountInString(t) > v.maxValue {
			add(f, fmt.Sprintf("value is longer than %d characters (maxValueLength)", v.maxValue))
			continue
		}
		if reason := v.checkField(r, f, &p); reason != "" {
			add(f, reason)
		}
	}
	v.checkDates(&p, add)
	if len(rej) > 0 {
		return model.Person{Line: r.Line, ExternalID: p.ExternalID, Email: p.Email}, rej
	}
	return p, nil
}

// checkField checks the value of field f of r and sets it on p; it returns
// why the value is refused, or "".
func (v *Validator) checkField(r *Row, f Field, p *model.Person) string {
	var reason string
	switch f {
	case ExternalID:
		p.ExternalID, reason = checkID(r.Text[f], v.nonLatin)
	case Email:
		p.Email, reason = v.checkEmail(r.Text[f])
	case FirstName:
		p.FirstName, reason = checkText(r.Text[f])
	case LastName:
		p.LastName, reason = checkText(r.Text[f])
	case Department:
		p.Department, reason = checkText(r.Text[f])
	case Location:
		p.Location, reason = checkText(r.Text[f])
	case StartDate:
		p.StartDate, reason = v.date(r, f)
	case BirthDate:
		if m, d, ok := model.ParseMonthDay(strings.TrimSpace(r.Text[f])); ok && r.Date[f].IsZero() {
			p.BirthMonth, p.BirthDay = m, d // a birthday without its year
			break
		}
		p.BirthDate, reason = v.date(r, f)
	case AddBalance:
		p.AddBalance, reason = v.amount(r.Text[f])
	}
	return reason
}

// checkEmail checks an e-mail address with CheckEmail, then its
// characters as a key's. A plain address (plainEmail) takes the fast path.
func (v *Validator) checkEmail(s string) (string, string) {
	if e, ok := plainEmail(s); ok {
		return e, ""
	}
	e, reason := CheckEmail(s)
	if reason == "" && e != "" {
		if why := checkKey(e, v.nonLatin); why != "" {
			return "", "e-mail " + why
		}
	}
	return e, reason
}

// amount parses a balance with ParseAmount and refuses one above the
// maximum.
func (v *Validator) amount(s string) (*float64, string) {
	a, reason := ParseAmount(s)
	if a != nil && (math.IsInf(*a, 0) || math.IsNaN(*a) || *a > v.maxBalance) {
		return nil, fmt.Sprintf("amount %s is above the maximum balance of %s (maxBalance)",
			quoteValue(strings.TrimSpace(s)), strconv.FormatFloat(v.maxBalance, 'f', -1, 64))
	}
	return a, reason
}

func (v *Validator) date(r *Row, f Field) (time.Time, string) {
	if !r.Date[f].IsZero() {
		return dateOf(r.Date[f]), ""
	}
	return ParseDate(r.Text[f], v.layouts[f])
}

// checkDates rejects impossible combinations of valid dates.
func (v *Validator) checkDates(p *model.Person, add func(Field, string)) {
	birth, start := p.BirthDate, p.StartDate
	if !birth.IsZero() && birth.After(v.today) {
		add(BirthDate, fmt.Sprintf("birth date %s is in the future", maskedDate(birth)))
		birth = time.Time{}
	}
	if !start.IsZero() && start.After(v.latestStart) {
		add(StartDate, fmt.Sprintf("start date %s is more than 2 years ahead", maskedDate(start)))
	}
	if birth.IsZero() || start.IsZero() {
		return
	}
	if start.Before(birth) {
		add(StartDate, fmt.Sprintf("start date %s is before the birth date", maskedDate(start)))
		return
	}
	// Apart by MinAgeAtStart leap years or more, the two dates need no
	// calendar: the common case, without AddDate's normalization.
	if start.Sub(birth) < minAgeSpan && start.Before(birth.AddDate(MinAgeAtStart, 0, 0)) {
		add(BirthDate, fmt.Sprintf("person would be younger than %d on the start date %s", MinAgeAtStart, maskedDate(start)))
	}
}

// minAgeSpan is MinAgeAtStart years of 366 days: longer than any
// MinAgeAtStart calendar years.
const minAgeSpan = MinAgeAtStart * 366 * 24 * time.Hour

// maskedDate writes a date for a reason, masked as model.MaskDate does:
// a rejection never holds a whole date.
func maskedDate(t time.Time) string { return model.MaskDate(t.Format(model.DateLayout)) }

// dateOf returns the calendar day of t as UTC midnight.
func dateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ParseDate parses a date written with layout. "" gives the zero time.
// The reason of a failure quotes the value masked (model.MaskDate: its
// first two characters and its shape) and names the layout with an
// example, so an HR admin can see what was expected.
func ParseDate(s, layout string) (time.Time, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, ""
	}
	if layout == DefaultDateLayout {
		if t, year, ok := parseISODate(s); ok && year >= 1900 {
			return t, ""
		}
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Sprintf("date %s does not match the layout %q (e.g. %s)",
			strconv.Quote(model.MaskDate(s)), layout, time.Date(2024, time.December, 31, 0, 0, 0, 0, time.UTC).Format(layout))
	}
	t = dateOf(t)
	if t.Year() < 1900 {
		return time.Time{}, fmt.Sprintf("date %s is before 1900", strconv.Quote(model.MaskDate(s)))
	}
	return t, ""
}

// quoteValue quotes a bad value for a reason, cut to a sane length.
func quoteValue(s string) string {
	const maxRunes = 40
	if utf8.RuneCountInString(s) > maxRunes {
		s = string([]rune(s)[:maxRunes]) + "…"
	}
	return strconv.Quote(s)
}

// ParseAmount parses a balance: digits with an optional "." and decimals,
// nothing else ("1,000.50", "1e3", "+5" and "-5" are refused). "" gives
// nil.
func ParseAmount(s string) (*float64, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ""
	}
	if strings.HasPrefix(s, "-") {
		return nil, fmt.Sprintf("amount %s is negative; it must be zero or more", quoteValue(s))
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !allDigits(intPart) || (hasDot && !allDigits(frac)) {
		return nil, fmt.Sprintf(`amount %s is not a plain number: use digits with "." as the decimal separator, no thousands separators, signs or currency`, quoteValue(s))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Sprintf("amount %s is out of range", quoteValue(s))
	}
	return &f, ""
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkID trims and normalizes an externalId and refuses the characters
// checkKey refuses (invisible ones, look-alike letters), overlong
// values and the scientific notation a spreadsheet writes for long numbers
// ("1.23E+05"), which has lost digits already.
func checkID(s string, allowNonLatin bool) (string, string) {
	id := s
	// A plain value (plainValue) of at most MaxIDLength bytes is its own
	// normal form and passes the checks of its characters and length.
	if !plainValue(s) || len(s) > MaxIDLength {
		id = NormalizeID(s)
		if id == "" {
			return "", ""
		}
		if utf8.RuneCountInString(id) > MaxIDLength {
			return "", fmt.Sprintf("externalId is longer than %d characters", MaxIDLength)
		}
		if reason := checkKey(id, allowNonLatin); reason != "" {
			return "", "externalId " + reason
		}
	}
	if looksScientific(id) {
		return "", fmt.Sprintf("externalId %s looks like a number a spreadsheet rewrote in scientific notation; export the column as text", quoteValue(id))
	}
	return id, ""
}

// looksScientific matches d[.ddd]E[+-]dd.
func looksScientific(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' { // it starts with a digit
		return false
	}
	e := strings.IndexAny(s, "eE")
	if e < 1 { // no exponent, or no digit before it
		return false
	}
	mant, exp := s[:e], s[e+1:]
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if !allDigits(intPart) || (hasDot && !allDigits(frac)) {
		return false
	}
	for exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	return allDigits(exp)
}

// checkText trims a free-text value and refuses control characters other
// than line breaks and tabs, which quoted CSV fields may hold.
func checkText(s string) (string, string) {
	if plainValue(s) {
		return s, "" // nothing to trim, nothing to refuse
	}
	s = strings.TrimSpace(s)
	if reason := badChars(s, true); reason != "" {
		return "", "value " + reason
	}
	return s, ""
}

// badChars refuses control characters (but line breaks and tabs when
// spaces is set) and the replacement character a decoder leaves for bytes
// that are not valid in the file's encoding.
func badChars(s string, spaces bool) string {
	// Printable ASCII has nothing to refuse: the runes are looked at from
	// the first other byte on, in one pass (a character that could not be
	// decoded is named before any control character).
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return badRunes(s[i:], spaces)
		}
	}
	return ""
}

// badRunes is badChars past its printable ASCII prefix.
func badRunes(s string, spaces bool) string {
	control := false
	for _, r := range s {
		if r == utf8.RuneError {
			return "holds a character that could not be decoded: check the file's encoding"
		}
		if unicode.IsControl(r) && (!spaces || (r != '\n' && r != '\r' && r != '\t')) {
			control = true
		}
	}
	if control {
		return "holds control characters"
	}
	return ""
}

// CheckEmail normalizes an e-mail address (trimmed, lower-cased) and checks
// it: net/mail must parse it as a bare address (no display name or angle
// brackets), with one "@", a local part of at most 64 bytes and a domain of
// dot-separated labels of letters, digits and hyphens. The reason never
// quotes the address.
func CheckEmail(s string) (string, string) {
	e := NormalizeEmail(s)
	if e == "" {
		return "", ""
	}
	if plainAddress(e) {
		return e, ""
	}
	return checkEmail(e)
}

// checkEmail makes every check of CheckEmail on a normalized address.
func checkEmail(e string) (string, string) {
	const bad = "not a valid e-mail address"
	if len(e) > 254 {
		return "", bad + ": longer than 254 characters"
	}
	if strings.Count(e, "@") != 1 {
		return "", bad + `: it must hold exactly one "@"`
	}
	addr, err := mail.ParseAddress(e)
	if err != nil || addr.Name != "" || addr.Address != e {
		return "", bad + ": a bare address is expected, like jane@company.com"
	}
	local, domain, _ := strings.Cut(e, "@")
	if local == "" || len(local) > 64 {
		return "", bad + ": the part before @ is empty or too long"
	}
	if reason := checkDomain(domain); reason != "" {
		return "", bad + ": " + reason
	}
	return e, ""
}

func checkDomain(d string) string {
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "the domain has no dot"
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "the domain has an empty or too long part"
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "a domain part starts or ends with a hyphen"
		}
		for _, r := range l {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return "the domain holds a character other than letters, digits, hyphens and dots"
			}
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return "the top-level domain is numeric"
	}
	return ""
}
