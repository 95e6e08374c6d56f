package grants

import (
	"slices"
	"strconv"
	"time"

	"hrsync/config"
)

// Person is what the rules know of one person: the state's row (never a
// birth date) and, for birthday rules, the month and day of birth read from
// the last good export.
type Person struct {
	ExternalID string
	Location   string
	Department string
	// StartDate is the first working day (UTC midnight); zero when unknown,
	// and then FirstSeen stands for it.
	StartDate time.Time
	// FirstSeen is the day a source first listed the person.
	FirstSeen time.Time
	// Departed is the day the people sync saw the person leave; zero while
	// active.
	Departed time.Time
	// OnPlatform is true once the platform confirmed the person's creation.
	OnPlatform bool
	// BirthMonth and BirthDay come from the last good export; 0 when not
	// known.
	BirthMonth time.Month
	BirthDay   int
}

// Due is one grant a rule owes a person: its occurrence (the year of a
// yearly rule, the key of a campaign), the day it is granted and its amount.
type Due struct {
	Rule       string  `json:"rule"`
	ExternalID string  `json:"externalId"`
	Occurrence string  `json:"occurrence"`
	Day        Date    `json:"day"`
	Amount     float64 `json:"amount"`
	SendEmail  bool    `json:"shouldSendEmail"`
}

// Skip says why an occurrence in the window was not due to a person.
type Skip string

// Skipped is an occurrence in the window that a person is not owed, and why.
type Skipped struct {
	Due
	Why Skip
}

// Why an occurrence is skipped.
const (
	SkipNotHired    Skip = "not hired yet (or not long enough)"
	SkipDeparted    Skip = "departed before the day"
	SkipFiltered    Skip = "outside the rule's locations or departments"
	SkipNotOnPlatfm Skip = "not yet created on the platform"
)

// Date is a calendar date (UTC midnight) that prints as YYYY-MM-DD in
// JSON, or null when zero.
type Date struct{ time.Time }

// MarshalJSON renders the date as "YYYY-MM-DD", the zero date as null.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + d.Format("2006-01-02") + `"`), nil
}

// day returns t's calendar date in loc, as UTC midnight.
func day(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// dateIn returns month/day in year, with 29 February moved to 28 February
// or 1 March (feb29) when year has none.
func dateIn(year int, month time.Month, dd int, feb29 string) time.Time {
	if month == time.February && dd == 29 && !leap(year) {
		if feb29 == config.Feb29ToMar1 {
			return time.Date(year, time.March, 1, 0, 0, 0, 0, time.UTC)
		}
		return time.Date(year, time.February, 28, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(year, month, dd, 0, 0, 0, 0, time.UTC)
}

func leap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// grantDay is the day a yearly rule grants for a date: daysBefore earlier,
// then moved to the Friday before when it falls on a weekend and the rule
// asks for it.
func grantDay(r *config.GrantRule, date time.Time) time.Time {
	g := date.AddDate(0, 0, -r.DaysBefore)
	if r.WeekendToFriday {
		switch g.Weekday() {
		case time.Saturday:
			g = g.AddDate(0, 0, -1)
		case time.Sunday:
			g = g.AddDate(0, 0, -2)
		}
	}
	return g
}

// Occurrences returns what rule r owes person p for the grant days in
// [from, to] (calendar dates, UTC midnight), and why the others in that
// window were skipped.
func Occurrences(r *config.GrantRule, p Person, from, to time.Time) (due []Due, skipped []Skipped) {
	add := func(occurrence string, g time.Time, amount float64) {
		if g.Before(from) || g.After(to) || amount <= 0 {
			return
		}
		d := Due{Rule: r.Name, ExternalID: p.ExternalID, Occurrence: occurrence, Day: Date{g}, Amount: amount, SendEmail: r.ShouldSendEmail}
		if why := eligible(r, p, g); why != "" {
			skipped = append(skipped, Skipped{Due: d, Why: why})
			return
		}
		due = append(due, d)
	}
	switch r.Type {
	case config.RuleCampaign:
		add(r.Key, r.CampaignDate(), r.Amount)
	case config.RuleBirthday, config.RuleWorkAnniversary:
		// daysBefore may move a date of next year into the window.
		for y := from.Year(); y <= to.Year()+1; y++ {
			var date time.Time
			amount := r.Amount
			if r.Type == config.RuleBirthday {
				if p.BirthMonth == 0 {
					return nil, nil // counted by the plan (NoBirthDate)
				}
				date = dateIn(y, p.BirthMonth, p.BirthDay, r.Feb29)
			} else {
				if p.StartDate.IsZero() || y-p.StartDate.Year() < 1 {
					continue
				}
				date = dateIn(y, p.StartDate.Month(), p.StartDate.Day(), r.Feb29)
				amount = r.AmountFor(y - p.StartDate.Year())
			}
			add(strconv.Itoa(y), grantDay(r, date), amount)
		}
	}
	return due, skipped
}

// eligible returns why p may not be granted on day g by rule r, or "".
func eligible(r *config.GrantRule, p Person, g time.Time) Skip {
	start := p.StartDate
	if start.IsZero() {
		start = p.FirstSeen
	}
	switch {
	case start.IsZero() || start.After(g.AddDate(0, 0, -r.MinTenureDays)):
		return SkipNotHired
	case !p.Departed.IsZero() && !p.Departed.After(g):
		return SkipDeparted
	case len(r.Locations) > 0 && !slices.Contains(r.Locations, p.Location),
		len(r.Departments) > 0 && !slices.Contains(r.Departments, p.Department):
		return SkipFiltered
	case !p.OnPlatform:
		return SkipNotOnPlatfm
	}
	return ""
}
