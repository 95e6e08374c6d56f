package config

import (
	"testing"
	"time"
)

func TestGrantRules(t *testing.T) {
	rule := func(s string) string { return "    grants:\n      rules:\n        - " + s + "\n" }
	cases := []struct{ name, yaml, path, reason string }{
		{"no type", rule("{name: b, amount: 5}"), "tenants[0].grants.rules[0].type", "is required"},
		{"unknown type", rule("{name: b, type: birthdays, amount: 5}"), "tenants[0].grants.rules[0].type", `"birthdays" is not a rule type`},
		{"bad name", rule("{name: Birth Day, type: birthday, amount: 5}"), "tenants[0].grants.rules[0].name", "lower-case"},
		{"the people job's reason", rule("{name: initial, type: birthday, amount: 5}"), "tenants[0].grants.rules[0].name", "reserved for the people job"},
		{"no amount", rule("{name: b, type: birthday}"), "tenants[0].grants.rules[0].amount", "greater than 0"},
		{"negative amount", rule("{name: a, type: workAnniversary, amount: -1}"), "tenants[0].grants.rules[0].amount", "must not be negative"},
		{"anniversary without amounts", rule("{name: a, type: workAnniversary}"), "tenants[0].grants.rules[0].amount", "amount or amountByYears"},
		{"years below 1", rule("{name: a, type: workAnniversary, amountByYears: {0: 5}}"), "tenants[0].grants.rules[0].amountByYears.0", "at least 1"},
		{"amounts by years on a birthday", rule("{name: b, type: birthday, amount: 5, amountByYears: {1: 5}}"), "tenants[0].grants.rules[0].amountByYears", "only a workAnniversary"},
		{"feb29", rule("{name: b, type: birthday, amount: 5, feb29: mar2}"), "tenants[0].grants.rules[0].feb29", "feb28 or mar1"},
		{"days before", rule("{name: b, type: birthday, amount: 5, daysBefore: -1}"), "tenants[0].grants.rules[0].daysBefore", "must not be negative"},
		{"campaign without key", rule("{name: c, type: campaign, amount: 5, date: '2026-12-01'}"), "tenants[0].grants.rules[0].key", "is required"},
		{"campaign date", rule("{name: c, type: campaign, amount: 5, key: k, date: '01/12/2026'}"), "tenants[0].grants.rules[0].date", "YYYY-MM-DD"},
		{"campaign days before", rule("{name: c, type: campaign, amount: 5, key: k, date: '2026-12-01', daysBefore: 2}"), "tenants[0].grants.rules[0].daysBefore", "grants on its date"},
		{"time zone", "    grants: {timezone: Mars/Olympus}\n", "tenants[0].grants.timezone", "unknown time zone"},
		{"look-back", "    grants: {lookbackDays: -1}\n", "tenants[0].grants.lookbackDays", "must not be negative"},
		{"budget", "    grants: {maxPerMonth: -5}\n", "tenants[0].grants.maxPerMonth", "must not be negative"},
		{"schedule", "    schedules: {grants: 'every day'}\n", "tenants[0].schedules.grants", "invalid cron spec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantOnlyProblem(t, minimal+c.yaml, c.path, c.reason) })
	}
	t.Run("a duplicate name names its line", func(t *testing.T) {
		_, err := load(t, minimal+"    grants:\n      rules:\n        - {name: b, type: birthday, amount: 5}\n        - {name: b, type: birthday, amount: 6}\n", nil)
		ps := problemsOf(t, err)
		if len(ps) != 1 || ps[0].Path != "tenants[0].grants.rules[1].name" || ps[0].Line != 12 {
			t.Fatalf("got %+v, want rules[1].name on line 12", ps)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		cfg := mustLoad(t, minimal, nil)
		g := cfg.Tenants[0].Grants
		if g.LookbackDays != 7 || g.MaxPerRun != 0 || len(g.Rules) != 0 || g.Location() != time.UTC || cfg.Tenants[0].Schedules.Grants != "" {
			t.Errorf("without rules: %+v, schedule %q", g, cfg.Tenants[0].Schedules.Grants)
		}
		cfg = mustLoad(t, "timezone: Europe/Paris\n"+minimal+rule("{name: c, type: campaign, key: winter, date: '2026-12-01', amount: 50, locations: [Berlin]}")+
			"        - {name: b, type: birthday, amount: 5}\n", nil)
		g = cfg.Tenants[0].Grants
		c, _ := g.Rule("c")
		b, _ := g.Rule("b")
		if g.Location().String() != "Europe/Paris" || cfg.Tenants[0].Schedules.Grants != DefaultGrantsCron ||
			!c.CampaignDate().Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || b.Feb29 != Feb29ToFeb28 {
			t.Errorf("with rules: zone %s, schedule %q, campaign %s, feb29 %q", g.Location(), cfg.Tenants[0].Schedules.Grants, c.CampaignDate(), b.Feb29)
		}
	})
}
