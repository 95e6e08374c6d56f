package main

import (
	"testing"

	"hrsync/config"
)

// TestNewMetricsStartsEveryRuleAtZero: the configured grant rules of each
// tenant have their hrsync_rule_grants_total series before any run, so an
// alert on them works from the first scrape; a tenant without rules has none.
func TestNewMetricsStartsEveryRuleAtZero(t *testing.T) {
	tenants := []config.Tenant{
		{Name: "acme", Grants: config.Grants{Rules: []config.GrantRule{{Name: "birthday"}, {Name: "winter"}}}},
		{Name: "beta"},
	}
	families, err := newMetrics(tenants).Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "hrsync_rule_grants_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			key := ""
			for _, l := range s.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			got[key] = s.GetCounter().GetValue()
		}
	}
	if len(got) != 6 {
		t.Errorf("%d rule series, want 6 (two rules of acme, three results each): %v", len(got), got)
	}
	for _, rule := range []string{"birthday", "winter"} {
		for _, result := range []string{"applied", "held", "skipped"} {
			key := "job=grants result=" + result + " rule=" + rule + " tenant=acme "
			if v, ok := got[key]; !ok || v != 0 {
				t.Errorf("series %s = %v (present: %v), want 0", key, v, ok)
			}
		}
	}
}
