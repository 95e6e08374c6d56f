package config

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"hrsync/model"
)

// Grants is a tenant's policy for recurring and campaign grants (the grants
// job): its rules, the time zone its days are read in, how far back a run
// catches up, and its budget.
type Grants struct {
	// Timezone is the IANA zone "the day" of every rule is read in; ""
	// means the top-level timezone.
	Timezone string `yaml:"timezone"`
	// LookbackDays is how many days before today a run catches up on
	// occurrences it missed (the job was down).
	LookbackDays int `yaml:"lookbackDays"`
	// MaxPerRun caps the total amount one run may grant; 0 means no cap.
	MaxPerRun float64 `yaml:"maxPerRun"`
	// MaxPerMonth caps the total amount granted by the grants job in one
	// calendar month of Timezone; 0 means no cap.
	MaxPerMonth float64 `yaml:"maxPerMonth"`
	// Rules are the tenant's grant rules, each with a stable name.
	Rules []GrantRule `yaml:"rules"`

	location *time.Location
}

// The kinds of grant rule.
const (
	RuleBirthday        = "birthday"
	RuleWorkAnniversary = "workAnniversary"
	RuleCampaign        = "campaign"
)

// What 29 February means in a year without it.
const (
	Feb29ToFeb28 = "feb28"
	Feb29ToMar1  = "mar1"
)

// DefaultGrantsLookbackDays is the default of grants.lookbackDays.
const DefaultGrantsLookbackDays = 7

// DefaultGrantsCron is the grants job's schedule when the tenant has rules
// and names none.
const DefaultGrantsCron = "0 * * * *"

// GrantRule is one grant rule: a birthday, a work anniversary or a one-off
// campaign.
type GrantRule struct {
	// Name identifies the rule; it is the grant's reason in the ledger, so
	// it must never change once grants were made.
	Name string `yaml:"name"`
	// Type is birthday, workAnniversary or campaign.
	Type string `yaml:"type"`
	// Amount is the balance granted; for workAnniversary, the amount of a
	// number of years that AmountByYears does not list (0: none).
	Amount float64 `yaml:"amount"`
	// AmountByYears is, for workAnniversary, the amount per years of service.
	AmountByYears map[int]float64 `yaml:"amountByYears"`
	// ShouldSendEmail asks the platform to e-mail the person.
	ShouldSendEmail bool `yaml:"shouldSendEmail"`
	// DaysBefore grants that many days before the date (0: on the day).
	DaysBefore int `yaml:"daysBefore"`
	// WeekendToFriday moves a grant day that falls on a Saturday or Sunday
	// to the Friday before.
	WeekendToFriday bool `yaml:"weekendToFriday"`
	// Feb29 is what a 29 February date means in a year without it: feb28
	// or mar1.
	Feb29 string `yaml:"feb29"`
	// MinTenureDays is how many days before the grant day a person must
	// have started.
	MinTenureDays int `yaml:"minTenureDays"`
	// Locations, when not empty, limits the rule to people of these work
	// locations (as the HR source names them).
	Locations []string `yaml:"locations"`
	// Departments, when not empty, limits the rule to these departments.
	Departments []string `yaml:"departments"`
	// Key is, for a campaign, its occurrence in the ledger: one grant per
	// person, rule and key, ever.
	Key string `yaml:"key"`
	// Date is, for a campaign, the day it grants (YYYY-MM-DD).
	Date string `yaml:"date"`

	date time.Time
}

// Location returns the zone the grants' days are read in, set by Load.
func (g *Grants) Location() *time.Location {
	if g.location == nil {
		return time.UTC
	}
	return g.location
}

// CampaignDate returns a campaign's date, parsed by Load (UTC midnight).
func (r *GrantRule) CampaignDate() time.Time { return r.date }

// AmountFor returns a work anniversary's amount for years of service.
func (r *GrantRule) AmountFor(years int) float64 {
	if a, ok := r.AmountByYears[years]; ok {
		return a
	}
	return r.Amount
}

// Rule returns the rule with the given name.
func (g *Grants) Rule(name string) (*GrantRule, bool) {
	for i := range g.Rules {
		if g.Rules[i].Name == name {
			return &g.Rules[i], true
		}
	}
	return nil, false
}

// fillDefaults sets the defaults of the rules' keys.
func (g *Grants) fillDefaults(s *Schedules) {
	for i := range g.Rules {
		if g.Rules[i].Feb29 == "" {
			g.Rules[i].Feb29 = Feb29ToFeb28
		}
	}
	if len(g.Rules) > 0 && s.Grants == "" {
		s.Grants = DefaultGrantsCron
	}
}

// validate checks the grants policy of a tenant at path (tenants[i]);
// zone is the top-level time zone, reason the people job's grant reason.
func (g *Grants) validate(path string, ps *problems, zone *time.Location, reason string) {
	path += ".grants"
	g.location = zone
	if g.Timezone != "" {
		loc, err := time.LoadLocation(g.Timezone)
		if err != nil {
			ps.addf(path+".timezone", "unknown time zone %q: use an IANA name such as UTC or Asia/Tokyo", g.Timezone)
		} else {
			g.location = loc
		}
	}
	atLeast(ps, path+".lookbackDays", g.LookbackDays, 0)
	money(ps, path+".maxPerRun", g.MaxPerRun)
	money(ps, path+".maxPerMonth", g.MaxPerMonth)
	names := map[string]int{}
	for i := range g.Rules {
		rp := fmt.Sprintf("%s.rules[%d]", path, i)
		r := &g.Rules[i]
		switch {
		case !grantReason.MatchString(r.Name):
			ps.addf(rp+".name", "must be 1 to 63 lower-case letters, digits, '-', '_' or '.'")
		case r.Name == reason || r.Name == model.InitialGrantReason:
			ps.addf(rp+".name", "%q is reserved for the people job's grant (people.grantReason, %q): choose another name", r.Name, model.InitialGrantReason)
		default:
			if first, dup := names[r.Name]; dup {
				ps.addf(rp+".name", "%q is already the name of rules[%d]", r.Name, first)
			}
			names[r.Name] = i
		}
		r.validate(rp, ps)
	}
}

// validate checks one rule at path.
func (r *GrantRule) validate(path string, ps *problems) {
	money(ps, path+".amount", r.Amount)
	atLeast(ps, path+".daysBefore", r.DaysBefore, 0)
	if r.DaysBefore > 300 {
		ps.addf(path+".daysBefore", "must be at most 300")
	}
	atLeast(ps, path+".minTenureDays", r.MinTenureDays, 0)
	switch r.Feb29 {
	case Feb29ToFeb28, Feb29ToMar1:
	default:
		ps.addf(path+".feb29", "must be feb28 or mar1")
	}
	if r.Type != RuleWorkAnniversary && len(r.AmountByYears) > 0 {
		ps.addf(path+".amountByYears", "only a workAnniversary rule has amounts by years")
	}
	if r.Type != RuleCampaign && (r.Key != "" || r.Date != "") {
		ps.addf(path+".type", "only a campaign has a key and a date")
	}
	switch r.Type {
	case RuleBirthday:
		positive(ps, path+".amount", r.Amount)
	case RuleWorkAnniversary:
		for years, a := range r.AmountByYears {
			yp := path + ".amountByYears." + strconv.Itoa(years)
			if years < 1 {
				ps.addf(yp, "years of service must be at least 1")
			}
			money(ps, yp, a)
		}
		if r.Amount == 0 && len(r.AmountByYears) == 0 {
			ps.addf(path+".amount", "a workAnniversary rule needs an amount or amountByYears")
		}
	case RuleCampaign:
		positive(ps, path+".amount", r.Amount)
		if !grantReason.MatchString(r.Key) {
			ps.addf(path+".key", "is required: 1 to 63 lower-case letters, digits, '-', '_' or '.' (the campaign's occurrence in the ledger)")
		}
		d, err := time.Parse(model.DateLayout, r.Date)
		if err != nil {
			ps.addf(path+".date", "%q is not a date such as 2026-12-01 (YYYY-MM-DD)", r.Date)
		} else {
			r.date = d
		}
		if r.DaysBefore != 0 || r.WeekendToFriday {
			ps.addf(path+".daysBefore", "a campaign grants on its date: daysBefore and weekendToFriday do not apply")
		}
	case "":
		ps.addf(path+".type", "is required: birthday, workAnniversary or campaign")
	default:
		ps.addf(path+".type", "%q is not a rule type: use birthday, workAnniversary or campaign", r.Type)
	}
}

// money checks an amount: finite and not negative.
func money(ps *problems, path string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		ps.addf(path, "must be a finite number")
	case v < 0:
		ps.addf(path, "must not be negative")
	}
}

// positive checks an amount that must be given.
func positive(ps *problems, path string, v float64) {
	if v <= 0 && !math.IsNaN(v) {
		ps.addf(path, "must be greater than 0")
	}
}
