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
