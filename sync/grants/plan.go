package grants

import (
	"context"
	"fmt"
	"sort"
	"time"

	"hrsync/config"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// RulePlan is what one rule owes in a run: its window of grant days, and
// the grants due in it (count and total) beside those already in the ledger
// and those skipped.
type RulePlan struct {
	Rule     string  `json:"rule"`
	Type     string  `json:"type"`
	From     Date    `json:"from"`
	To       Date    `json:"to"`
	Due      int     `json:"due"`
	Total    float64 `json:"total"`
	Already  int     `json:"alreadyGranted"`
	Held     int     `json:"held"`
	Skipped  int     `json:"skipped"`
	LastDay  Date    `json:"lastDay"`
	firstDay time.Time
}

// Plan is what a run of the grants job would do as of a day.
type Plan struct {
	Tenant string `json:"tenant"`
	// Day is the day the run grants as of, in the rules' time zone.
	Day Date `json:"day"`
	// Rules are the rules in configuration order.
	Rules []RulePlan `json:"rules"`
	// Due are the grants the run would send, by rule, day and person.
	Due []Due `json:"due"`
	// Total is the sum of Due's amounts.
	Total float64 `json:"total"`
	// MonthSpent is what the grants job already committed this calendar
	// month (applied, pending or held).
	MonthSpent float64 `json:"monthSpent"`
	// Safeguard says why the run would stop before any call; "" when not.
	Safeguard string `json:"safeguard"`
	// NoBirthDate counts active people a birthday rule cannot serve: the
	// last good export gives no birth date for them.
	NoBirthDate int `json:"noBirthDate"`
	// Source is the export birth dates were read from; "" when none.
	Source string `json:"source"`

	people map[string]store.PersonRow
	// voids are the occurrences whose person had left on their day, not
	// yet in the ledger: a run records them as voided, so that they are
	// never granted after the person comes back.
	voids []model.Grant
	// births are the months and days of birth the export gave that the
	// state does not keep yet (a run saves them).
	births map[string]store.MonthDay
	// forget are the people the export lists without a birth date whose
	// month and day the state still keeps (a run removes them).
	forget []string
}

// BuildPlan computes what a run would grant as of asOf (a calendar date in
// the rules' time zone); the zero asOf means today. It reads the state and,
// for birthday rules, the last good export; it changes nothing.
func (j *Job) BuildPlan(ctx context.Context, asOf time.Time) (*Plan, error) {
	g := &j.opts.Grants
	loc := g.Location()
	d := day(j.opts.Now(), loc)
	if !asOf.IsZero() {
		d = asOf
	}
	plan := &Plan{Tenant: j.opts.Tenant, Day: Date{d}, Rules: []RulePlan{}, Due: []Due{}, people: map[string]store.PersonRow{}}
	if len(g.Rules) == 0 {
		return plan, nil
	}
	if err := j.windows(ctx, plan, d); err != nil {
		return nil, err
	}
	people, err := j.readPeople(ctx, plan, loc)
	if err != nil {
		return nil, err
	}
	if err := j.classify(ctx, plan, people); err != nil {
		return nil, err
	}
	sort.Slice(plan.Due, func(a, b int) bool {
		x, y := plan.Due[a], plan.Due[b]
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		if !x.Day.Equal(y.Day.Time) {
			return x.Day.Before(y.Day.Time)
		}
		return x.ExternalID < y.ExternalID
	})
	return plan, j.budget(ctx, plan, loc)
}

// windows sets each rule's window of grant days as of d: the look-back
// before d, never before the first day a run considered the rule (a new
// rule does not grant last week's birthdays).
func (j *Job) windows(ctx context.Context, plan *Plan, d time.Time) error {
	days, err := j.store.GrantDays(ctx, j.opts.Tenant)
	if err != nil {
		return err
	}
	for _, r := range j.opts.Grants.Rules {
		rp := RulePlan{Rule: r.Name, Type: r.Type, To: Date{d}, firstDay: d}
		if rec, ok := days[r.Name]; ok {
			rp.LastDay = Date{rec.LastDay}
			if rec.FirstDay.Before(d) {
				rp.firstDay = rec.FirstDay
			}
		}
		rp.From = Date{d.AddDate(0, 0, -j.opts.Grants.LookbackDays)}
		if rp.From.Before(rp.firstDay) {
			rp.From = Date{rp.firstDay}
		}
		plan.Rules = append(plan.Rules, rp)
	}
	return nil
}

// classify computes every occurrence of the rules' windows, then sorts
// them by the ledger's word on each (planRule).
func (j *Job) classify(ctx context.Context, plan *Plan, people []Person) error {
	rules := j.opts.Grants.Rules
	owed := make([][]Due, len(rules))
	skips := make([][]Skipped, len(rules))
	var keys []string
	for i := range rules {
		rp := &plan.Rules[i]
		for _, p := range people {
			due, skipped := Occurrences(&rules[i], p, rp.From.Time, rp.To.Time)
			owed[i], skips[i] = append(owed[i], due...), append(skips[i], skipped...)
			for _, d := range due {
				keys = append(keys, j.key(d))
			}
			for _, s := range skipped {
				keys = append(keys, j.key(s.Due))
			}
		}
	}
	ledger, err := j.store.GrantStates(ctx, keys)
	if err != nil {
		return err
	}
	for i := range rules {
		j.planRule(plan, &plan.Rules[i], owed[i], skips[i], ledger)
	}
	return nil
}

// key is the ledger key of an occurrence.
func (j *Job) key(d Due) string {
	return model.GrantKey(j.opts.Tenant, d.ExternalID, d.Rule, d.Occurrence)
}

// planRule adds a rule's occurrences to the plan by what the ledger holds
// of them: due when it holds nothing (or a call certainly not applied),
// held, already granted; skipped when not owed, and voided when the person
// had left on the day.
func (j *Job) planRule(plan *Plan, rp *RulePlan, due []Due, skipped []Skipped, ledger map[string]model.GrantState) {
	for _, s := range skipped {
		if _, decided := ledger[j.key(s.Due)]; decided {
			continue
		}
		// Counted once: on the days no run processed before (every run
		// looks at its whole window again).
		if rp.LastDay.IsZero() || s.Day.After(rp.LastDay.Time) {
			rp.Skipped++
		}
		if s.Why == SkipDeparted {
			plan.voids = append(plan.voids, model.Grant{Tenant: j.opts.Tenant, ExternalID: s.ExternalID,
				Reason: s.Rule, Occurrence: s.Occurrence, Amount: s.Amount})
		}
	}
	for _, d := range due {
		switch ledger[j.key(d)] {
		case "", model.GrantNotApplied:
			rp.Due++
			rp.Total += d.Amount
			plan.Total += d.Amount
			plan.Due = append(plan.Due, d)
		case model.GrantUnknown:
			rp.Held++
		default:
			rp.Already++
		}
	}
}

// readPeople reads the tenant's people from the state and, when a birthday
// rule needs them, the month and day of birth from the last good export.
func (j *Job) readPeople(ctx context.Context, plan *Plan, loc *time.Location) ([]Person, error) {
	var out []Person
	err := j.store.ScanPeople(ctx, j.opts.Tenant, func(r store.PersonRow) error {
		p := Person{
			ExternalID: r.ExternalID, Location: r.Location, Department: r.Department,
			StartDate: r.StartDate, OnPlatform: r.RemoteID != "",
		}
		if !r.FirstSeenAt.IsZero() {
			p.FirstSeen = day(r.FirstSeenAt, loc)
		}
		if !r.DepartedAt.IsZero() {
			p.Departed = day(r.DepartedAt, loc)
		}
		plan.people[r.ExternalID] = r
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read people: %w", err)
	}
	if !j.hasBirthdays() {
		return out, nil
	}
	kept, err := j.store.Birthdays(ctx, j.opts.Tenant)
	if err != nil {
		return nil, err
	}
	read, source, err := j.births(ctx)
	if err != nil {
		return nil, err
	}
	plan.Source = source
	plan.births = map[string]store.MonthDay{}
	for id, md := range read.days {
		if _, known := plan.people[id]; known && kept[id] != md {
			plan.births[id] = md
			kept[id] = md
		}
	}
	// A birth date a later export no longer gives is gone: the birthday
	// stops with that export, in the plan as in the run.
	for id := range read.without {
		if _, ok := kept[id]; ok {
			plan.forget = append(plan.forget, id)
			delete(kept, id)
		}
	}
	sort.Strings(plan.forget)
	for i := range out {
		md, ok := kept[out[i].ExternalID]
		if !ok {
			if out[i].Departed.IsZero() {
				plan.NoBirthDate++
			}
			continue
		}
		out[i].BirthMonth, out[i].BirthDay = md.Month, md.Day
	}
	return out, nil
}

func (j *Job) hasBirthdays() bool {
	for _, r := range j.opts.Grants.Rules {
		if r.Type == config.RuleBirthday {
			return true
		}
	}
	return false
}

// exportBirths is what the last good export says of birth dates: the month
// and day of each person it lists with one, and the people it lists
// without.
type exportBirths struct {
	days    map[string]store.MonthDay
	without map[string]bool
}

// births reads the month and day of birth of each person of the last good
// export, and who it lists without one; the year is dropped as it is read.
func (j *Job) births(ctx context.Context) (exportBirths, string, error) {
	out := exportBirths{days: map[string]store.MonthDay{}, without: map[string]bool{}}
	if j.export == nil {
		return out, "", nil
	}
	src, ok, err := j.export(ctx)
	if err != nil {
		return out, "", fmt.Errorf("open last good export: %w", err)
	}
	if !ok {
		return out, "", nil
	}
	lines := map[int]string{}
	_, err = src.Read(ctx, sources.Handler{
		Accept: func(p model.Person) error {
			if month, day, ok := p.Birthday(); ok {
				out.days[p.ExternalID] = store.MonthDay{Month: month, Day: day}
			} else {
				out.without[p.ExternalID] = true
			}
			lines[p.Line] = p.ExternalID
			return nil
		},
		Reject: func(model.Rejection) error { return nil },
		Retract: func(line int) error { // a duplicate found later: rejected too
			delete(out.days, lines[line])
			delete(out.without, lines[line])
			return nil
		},
	})
	if err != nil {
		return out, "", fmt.Errorf("read last good export %s: %w", src.Name(), err)
	}
	return out, src.Name(), nil
}

// budget sets the plan's month spending and its safeguard: a run whose
// total exceeds maxPerRun, or that would take a calendar month's total over
// maxPerMonth, stops before any call. A grant counts in the month of its
// grant day (of the rules' time zone), whatever day the run commits it: a
// run --date of an earlier month counts against that month.
func (j *Job) budget(ctx context.Context, plan *Plan, loc *time.Location) error {
	g := &j.opts.Grants
	months := map[time.Time]float64{monthOf(plan.Day.Time): 0}
	for _, d := range plan.Due {
		months[monthOf(d.Day.Time)] += d.Amount
	}
	order := make([]time.Time, 0, len(months))
	for m := range months {
		order = append(order, m)
	}
	sort.Slice(order, func(a, b int) bool { return order[a].Before(order[b]) })
	if g.MaxPerRun > 0 && plan.Total > g.MaxPerRun {
		plan.Safeguard = fmt.Sprintf("the run would grant %.2f in %d grants, over grants.maxPerRun (%.2f)",
			plan.Total, len(plan.Due), g.MaxPerRun)
	}
	for _, m := range order {
		spent, err := j.monthSpent(ctx, m, loc)
		if err != nil {
			return err
		}
		if m.Equal(monthOf(plan.Day.Time)) {
			plan.MonthSpent = spent
		}
		if plan.Safeguard == "" && g.MaxPerMonth > 0 && spent+months[m] > g.MaxPerMonth {
			plan.Safeguard = fmt.Sprintf("the run would grant %.2f in %s (%d grants due in all); with the %.2f already granted in %s that is %.2f, over grants.maxPerMonth (%.2f)",
				months[m], m.Format("2006-01"), len(plan.Due), spent, m.Format("2006-01"), spent+months[m], g.MaxPerMonth)
		}
	}
	return nil
}

// monthOf is the first day of d's month (d a calendar date, UTC midnight).
func monthOf(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// monthSpent is what the ledger holds of the rules' grants in the month
// that starts on m (a calendar date of loc): applied, pending or held.
func (j *Job) monthSpent(ctx context.Context, m time.Time, loc *time.Location) (float64, error) {
	names := make([]string, len(j.opts.Grants.Rules))
	for i, r := range j.opts.Grants.Rules {
		names[i] = r.Name
	}
	start := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, loc)
	return j.store.RuleGrantsTotal(ctx, j.opts.Tenant, names, start, start.AddDate(0, 1, 0))
}
