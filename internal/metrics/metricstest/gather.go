package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Value gathers g and returns the value of the first series of name whose
// labels include want (a counter's or gauge's value, a histogram's sample
// count), and whether there is one.
func Value(t testing.TB, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if hasLabels(s, want) {
				return Sample(s), true
			}
		}
	}
	return 0, false
}

// hasLabels tells whether s carries every label of want.
func hasLabels(s *dto.Metric, want map[string]string) bool {
	got := make(map[string]string, len(s.GetLabel()))
	for _, l := range s.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// Sample is the value of one series: a counter's or gauge's value, a
// histogram's sample count, an untyped value.
func Sample(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Histogram != nil:
		return float64(s.GetHistogram().GetSampleCount())
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	}
	return 0
}
