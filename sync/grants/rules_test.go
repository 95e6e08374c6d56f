package grants_test

import (
	"strconv"
	"testing"
	"time"

	"hrsync/config"
	"hrsync/sync/grants"
)

func TestOccurrences(t *testing.T) {
	base := grants.Person{ExternalID: "e1", Location: "Berlin", Department: "Eng", StartDate: date(2020, 3, 1),
		OnPlatform: true, BirthMonth: time.February, BirthDay: 29}
	for _, tc := range []struct {
		name     string
		rule     config.GrantRule
		person   func(p *grants.Person)
		from, to time.Time
		want     []string // day/occurrence/amount
		skipped  int
	}{
		{name: "29 February is 28 February in a year without it",
			rule: config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToFeb28},
			from: date(2027, 1, 1), to: date(2027, 12, 31), want: []string{"2027-02-28/2027/5"}},
		{name: "or 1 March",
			rule: config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToMar1},
			from: date(2027, 1, 1), to: date(2027, 12, 31), want: []string{"2027-03-01/2027/5"}},
		{name: "and 29 February in a leap year",
			rule: config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToMar1},
			from: date(2028, 1, 1), to: date(2028, 12, 31), want: []string{"2028-02-29/2028/5"}},
		{name: "days before reach into the year before, with the occurrence of the date's year",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, DaysBefore: 3, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.BirthMonth, p.BirthDay = time.January, 2 },
			from:   date(2027, 12, 20), to: date(2027, 12, 31), want: []string{"2027-12-30/2028/5"}},
		{name: "a Sunday moves to the Friday before",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, WeekendToFriday: true, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.BirthMonth, p.BirthDay = time.March, 7 }, // Sunday 7 March 2027
			from:   date(2027, 3, 1), to: date(2027, 3, 31), want: []string{"2027-03-05/2027/5"}},
		{name: "anniversary amounts by years, with the default",
			rule: config.GrantRule{Name: "a", Type: config.RuleWorkAnniversary, Amount: 10, AmountByYears: map[int]float64{5: 100}, Feb29: config.Feb29ToFeb28},
			from: date(2025, 1, 1), to: date(2026, 12, 31), want: []string{"2025-03-01/2025/100", "2026-03-01/2026/10"}},
		{name: "no anniversary in the year of the start",
			rule: config.GrantRule{Name: "a", Type: config.RuleWorkAnniversary, Amount: 10, Feb29: config.Feb29ToFeb28},
			from: date(2020, 1, 1), to: date(2020, 12, 31)},
		{name: "not hired long enough",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, MinTenureDays: 30, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.StartDate, p.BirthMonth, p.BirthDay = date(2027, 5, 1), time.May, 20 },
			from:   date(2027, 5, 1), to: date(2027, 5, 31), skipped: 1},
		{name: "departed before the day",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.Departed, p.BirthMonth, p.BirthDay = date(2027, 5, 20), time.May, 20 },
			from:   date(2027, 5, 1), to: date(2027, 5, 31), skipped: 1},
		{name: "departed after the day",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.Departed, p.BirthMonth, p.BirthDay = date(2027, 5, 21), time.May, 20 },
			from:   date(2027, 5, 1), to: date(2027, 5, 31), want: []string{"2027-05-20/2027/5"}},
		{name: "outside the locations",
			rule: config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Locations: []string{"Paris"}, Feb29: config.Feb29ToFeb28},
			from: date(2027, 1, 1), to: date(2027, 12, 31), skipped: 1},
		{name: "in the departments",
			rule: config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Departments: []string{"Eng"}, Feb29: config.Feb29ToFeb28},
			from: date(2027, 1, 1), to: date(2027, 12, 31), want: []string{"2027-02-28/2027/5"}},
		{name: "not on the platform yet",
			rule:   config.GrantRule{Name: "b", Type: config.RuleBirthday, Amount: 5, Feb29: config.Feb29ToFeb28},
			person: func(p *grants.Person) { p.OnPlatform = false },
			from:   date(2027, 1, 1), to: date(2027, 12, 31), skipped: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			if tc.person != nil {
				tc.person(&p)
			}
			due, skipped := grants.Occurrences(&tc.rule, p, tc.from, tc.to)
			var got []string
			for _, d := range due {
				got = append(got, d.Day.Format("2006-01-02")+"/"+d.Occurrence+"/"+strconv.FormatFloat(d.Amount, 'f', -1, 64))
			}
			if len(got) != len(tc.want) || len(skipped) != tc.skipped {
				t.Fatalf("due %v skipped %v, want %v and %d skipped", got, skipped, tc.want, tc.skipped)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("due %v, want %v", got, tc.want)
				}
			}
		})
	}
}
