package metrics

import (
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func counterFamily(name string, values map[string]float64) *dto.MetricFamily {
	f := &dto.MetricFamily{Name: &name, Type: dto.MetricType_COUNTER.Enum()}
	for outcome, v := range values {
		label, value := "outcome", outcome
		f.Metric = append(f.Metric, &dto.Metric{Label: []*dto.LabelPair{{Name: &label, Value: &value}}, Counter: &dto.Counter{Value: &v}})
	}
	return f
}

func gaugeFamily(name string, v float64) *dto.MetricFamily {
	return &dto.MetricFamily{Name: &name, Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: &v}}}}
}

func histogramFamily(name string, bounds []float64, counts []uint64, sum float64) *dto.MetricFamily {
	n := counts[len(counts)-1]
	h := &dto.Histogram{SampleCount: &n, SampleSum: &sum}
	for i := range bounds {
		b, c := bounds[i], counts[i]
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &b, CumulativeCount: &c})
	}
	return &dto.MetricFamily{Name: &name, Type: dto.MetricType_HISTOGRAM.Enum(), Metric: []*dto.Metric{{Histogram: h}}}
}

func byName(fs []*dto.MetricFamily) map[string]*dto.MetricFamily {
	out := map[string]*dto.MetricFamily{}
	for _, f := range fs {
		out[f.GetName()] = f
	}
	return out
}

func TestMergeFamilies(t *testing.T) {
	inf := math.Inf(1) // as the text format lists it
	prev := []*dto.MetricFamily{
		counterFamily("hrsync_runs_total", map[string]float64{"ok": 5, "failed": 2}),
		gaugeFamily("hrsync_last_success_timestamp_seconds", 1000),
		gaugeFamily("hrsync_grants_held", 3),
		histogramFamily("hrsync_run_duration_seconds", []float64{1, 5, inf}, []uint64{1, 3, 4}, 9),
		histogramFamily("hrsync_changed_buckets", []float64{1, 2}, []uint64{1, 1}, 1),
		gaugeFamily("hrsync_type_changed", 7),
	}
	cur := []*dto.MetricFamily{
		counterFamily("hrsync_runs_total", map[string]float64{"ok": 1, "attention": 0}),
		gaugeFamily("hrsync_grants_held", 0),
		histogramFamily("hrsync_run_duration_seconds", []float64{1, 5}, []uint64{0, 1}, 2),
		histogramFamily("hrsync_changed_buckets", []float64{1, 3}, []uint64{0, 1}, 2),
		counterFamily("hrsync_type_changed", map[string]float64{"ok": 1}),
	}
	got := byName(mergeFamilies(prev, cur))
	runs := map[string]float64{}
	for _, m := range got["hrsync_runs_total"].GetMetric() {
		runs[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	if runs["ok"] != 6 || runs["failed"] != 2 || runs["attention"] != 0 || len(runs) != 3 {
		t.Errorf("runs = %v, want ok 6 (5+1), failed 2 (kept), attention 0", runs)
	}
	if v := got["hrsync_last_success_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1000 {
		t.Errorf("a gauge the run did not set = %v, want the previous 1000", v)
	}
	if v := got["hrsync_grants_held"].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("a gauge the run set = %v, want the run's 0", v)
	}
	h := got["hrsync_run_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 5 || h.GetSampleSum() != 11 || len(h.GetBucket()) != 2 ||
		h.GetBucket()[0].GetCumulativeCount() != 1 || h.GetBucket()[1].GetCumulativeCount() != 4 {
		t.Errorf("duration = %v, want count 5, sum 11, buckets 1 and 4", h)
	}
	if h := got["hrsync_changed_buckets"].GetMetric()[0].GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() != 2 {
		t.Errorf("a histogram whose buckets changed = %v, want the run's own", h)
	}
	if f := got["hrsync_type_changed"]; f.GetType() != dto.MetricType_COUNTER || f.GetMetric()[0].GetCounter().GetValue() != 1 {
		t.Errorf("a family whose type changed = %v, want the run's own", f)
	}
}

// TestGroupOfARuleGrant: the grants job's per-rule series go with its own
// group when a one-shot run pushes, and with no other job's.
func TestGroupOfARuleGrant(t *testing.T) {
	m := New()
	m.ObserveRuleGrants("grants", "acme", RuleGrants{Rule: "birthday", Applied: 3})
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	pushed := func(job string) float64 {
		for _, f := range groupFamilies(families, Group{Job: job, Tenant: "acme"}, false) {
			if f.GetName() != "hrsync_rule_grants_total" {
				continue
			}
			sum := 0.0
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == "result" && l.GetValue() == "applied" {
						sum += s.GetCounter().GetValue()
					}
				}
			}
			return sum
		}
		return -1
	}
	if got := pushed("grants"); got != 3 {
		t.Errorf("grants group: applied = %v, want 3", got)
	}
	if got := pushed("people"); got != -1 {
		t.Errorf("people group carries the grants job's rule series (%v)", got)
	}
}

// timestampFamily is a gauge of last-run times by outcome.
func timestampFamily(name string, values map[string]float64) *dto.MetricFamily {
	f := &dto.MetricFamily{Name: &name, Type: dto.MetricType_GAUGE.Enum()}
	for outcome, v := range values {
		label, value := "outcome", outcome
		f.Metric = append(f.Metric, &dto.Metric{Label: []*dto.LabelPair{{Name: &label, Value: &value}}, Gauge: &dto.Gauge{Value: &v}})
	}
	return f
}

func TestMergeTimestampsKeepsTheLater(t *testing.T) {
	prev := []*dto.MetricFamily{
		timestampFamily(NameLastRun, map[string]float64{"attention": 1000, "failed": 900, "ok": 800}),
		gaugeFamily(NameLastSuccess, 1000),
		timestampFamily("hrsync_last_outcome", map[string]float64{"attention": 1, "ok": 0}),
	}
	// A retry at 1100 that ended ok, from a process whose clock is late
	// for the success it seeded (950).
	cur := []*dto.MetricFamily{
		timestampFamily(NameLastRun, map[string]float64{"ok": 1100, "failed": 850}),
		gaugeFamily(NameLastSuccess, 950),
		timestampFamily("hrsync_last_outcome", map[string]float64{"ok": 1}),
	}
	got := byName(mergeFamilies(prev, cur))
	runs := map[string]float64{}
	for _, m := range got[NameLastRun].GetMetric() {
		runs[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	want := map[string]float64{"attention": 1000, "failed": 900, "ok": 1100}
	if len(runs) != len(want) {
		t.Errorf("last runs = %v, want %v", runs, want)
	}
	for outcome, v := range want {
		if runs[outcome] != v {
			t.Errorf("last %s run = %v, want %v (runs %v)", outcome, runs[outcome], v, runs)
		}
	}
	if v := got[NameLastSuccess].GetMetric()[0].GetGauge().GetValue(); v != 1000 {
		t.Errorf("last success = %v, want 1000: a push lowered it", v)
	}
	// Any other gauge the run set replaces the group's whole.
	if n := len(got["hrsync_last_outcome"].GetMetric()); n != 1 {
		t.Errorf("last outcome has %d series, want the run's 1", n)
	}
}
