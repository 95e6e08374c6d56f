package metrics

import (
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// The labels a Pushgateway group carries on every series: the grouping key
// (job, tenant) and the instance label the Pushgateway adds.
const (
	labelJob      = "job"
	labelTenant   = "tenant"
	labelInstance = "instance"
)

// Names of the timestamp gauges that never go back: a push keeps, series
// by series, the later of the value the Pushgateway holds and the run's.
const (
	NameLastSuccess = Namespace + "_last_success_timestamp_seconds"
	NameLastRun     = Namespace + "_last_run_timestamp_seconds"
)

// isTimestampFamily reports whether the family named name is one of the
// timestamp gauges merged by their maximum.
func isTimestampFamily(name string) bool { return name == NameLastSuccess || name == NameLastRun }

// buildInfoName is the one family without job and tenant that every pushed
// group carries.
const buildInfoName = Namespace + "_build_info"

// groupFamilies picks from families the hrsync series of one group, without
// the grouping labels (the Pushgateway adds them back). fromGateway says the
// families were read from the Pushgateway, where each series of the group
// carries the grouping labels and instance=""; from the run's registry, the
// series of the group are those labelled with its job and tenant,
// hrsync_build_info, and the tenant's series of the group's TenantGauges.
func groupFamilies(families []*dto.MetricFamily, grp Group, fromGateway bool) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), Namespace+"_") {
			continue
		}
		var picked []*dto.Metric
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			inGroup := labels[labelJob] == grp.Job && labels[labelTenant] == grp.Tenant
			_, hasJob := labels[labelJob]
			switch {
			case fromGateway:
				inGroup = inGroup && labels[labelInstance] == ""
			case hasJob:
			case f.GetName() == buildInfoName:
				inGroup = true
			case slices.Contains(grp.TenantGauges, f.GetName()):
				inGroup = labels[labelTenant] == grp.Tenant
			}
			if inGroup {
				picked = append(picked, withoutGroupLabels(m))
			}
		}
		if len(picked) > 0 {
			out = append(out, &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type, Unit: f.Unit, Metric: picked})
		}
	}
	return out
}

// withoutGroupLabels is m without the job, tenant and instance labels; its
// values are shared with m, not copied.
func withoutGroupLabels(m *dto.Metric) *dto.Metric {
	var labels []*dto.LabelPair
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case labelJob, labelTenant, labelInstance:
			continue
		}
		labels = append(labels, l)
	}
	return &dto.Metric{Label: labels, Counter: m.Counter, Gauge: m.Gauge, Histogram: m.Histogram, Summary: m.Summary, Untyped: m.Untyped}
}

// mergeFamilies makes the group to push from what the Pushgateway held
// (prev) and what this run measured (cur):
//   - a counter or a histogram goes on from its previous value: the run's
//     value is added to it, series by series;
//   - a timestamp gauge (NameLastSuccess, NameLastRun) keeps, series by
//     series, the later of the two values, and every series of either
//     side: the time of the last run that needed attention survives a
//     retry that ended ok, and neither goes back when a clock does;
//   - any other family the run measured replaces the previous one whole (a
//     gauge is a state: the last outcome, the orders by status);
//   - a family the run did not measure keeps its previous value (the time
//     of the last success after a run that failed);
//   - a family whose type changed (an upgrade) starts afresh.
func mergeFamilies(prev, cur []*dto.MetricFamily) []*dto.MetricFamily {
	byName := map[string]*dto.MetricFamily{}
	for _, f := range prev {
		byName[f.GetName()] = f
	}
	out := make([]*dto.MetricFamily, 0, len(cur)+len(prev))
	for _, c := range cur {
		p, ok := byName[c.GetName()]
		delete(byName, c.GetName())
		if !ok || p.GetType() != c.GetType() {
			out = append(out, c)
			continue
		}
		switch {
		case c.GetType() == dto.MetricType_COUNTER, c.GetType() == dto.MetricType_HISTOGRAM:
			out = append(out, combineFamilies(p, c, addMetric))
		case c.GetType() == dto.MetricType_GAUGE && isTimestampFamily(c.GetName()):
			out = append(out, combineFamilies(p, c, laterGauge))
		default:
			out = append(out, c)
		}
	}
	for _, f := range prev {
		if _, kept := byName[f.GetName()]; kept {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// combineFamilies combines each series of c with the series of p of the
// same labels by combine; a series in only one of them is kept as it is.
func combineFamilies(p, c *dto.MetricFamily, combine func(p, c *dto.Metric) *dto.Metric) *dto.MetricFamily {
	prevByKey := map[string]*dto.Metric{}
	for _, m := range p.GetMetric() {
		prevByKey[labelKey(m)] = m
	}
	out := &dto.MetricFamily{Name: c.Name, Help: c.Help, Type: c.Type, Unit: c.Unit}
	for _, m := range c.GetMetric() {
		k := labelKey(m)
		pm, ok := prevByKey[k]
		delete(prevByKey, k)
		if !ok {
			out.Metric = append(out.Metric, m)
			continue
		}
		out.Metric = append(out.Metric, combine(pm, m))
	}
	for _, m := range p.GetMetric() {
		if _, left := prevByKey[labelKey(m)]; left {
			out.Metric = append(out.Metric, m)
		}
	}
	return out
}

// laterGauge is the series of p and c, two series of one gauge, with the
// greater value.
func laterGauge(p, c *dto.Metric) *dto.Metric {
	if p.GetGauge().GetValue() > c.GetGauge().GetValue() {
		return &dto.Metric{Label: c.Label, Gauge: p.Gauge}
	}
	return c
}

// addMetric is the sum of two series of one counter or histogram. A
// histogram whose buckets changed starts afresh from c.
func addMetric(p, c *dto.Metric) *dto.Metric {
	if c.Counter != nil {
		v := p.GetCounter().GetValue() + c.GetCounter().GetValue()
		return &dto.Metric{Label: c.Label, Counter: &dto.Counter{Value: &v}}
	}
	ph, ch := p.GetHistogram(), c.GetHistogram()
	pb, cb := finiteBuckets(ph), finiteBuckets(ch)
	if ph == nil || ch == nil || len(pb) != len(cb) {
		return c
	}
	count := ph.GetSampleCount() + ch.GetSampleCount()
	sum := ph.GetSampleSum() + ch.GetSampleSum()
	h := &dto.Histogram{SampleCount: &count, SampleSum: &sum}
	for i := range cb {
		if pb[i].GetUpperBound() != cb[i].GetUpperBound() {
			return c
		}
		n, bound := pb[i].GetCumulativeCount()+cb[i].GetCumulativeCount(), cb[i].GetUpperBound()
		h.Bucket = append(h.Bucket, &dto.Bucket{CumulativeCount: &n, UpperBound: &bound})
	}
	return &dto.Metric{Label: c.Label, Histogram: h}
}

// finiteBuckets are the buckets of h but +Inf, which the text format lists
// and a registry leaves implicit (the sample count).
func finiteBuckets(h *dto.Histogram) []*dto.Bucket {
	var out []*dto.Bucket
	for _, b := range h.GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) {
			out = append(out, b)
		}
	}
	return out
}

// labelKey identifies a series within its family by its labels.
func labelKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"\x00"+l.GetValue())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\x01")
}
