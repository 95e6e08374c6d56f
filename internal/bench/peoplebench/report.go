package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"hrsync/internal/bench/proc"
)

// summary is the median and spread of one figure over the repeats.
type summary struct {
	median, lo, hi float64
}

func summarize(vals []float64) summary {
	if len(vals) == 0 {
		return summary{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	mid := len(s) / 2
	med := s[mid]
	if len(s)%2 == 0 {
		med = (s[mid-1] + s[mid]) / 2
	}
	return summary{median: med, lo: s[0], hi: s[len(s)-1]}
}

func (s summary) cell(prec int) string {
	if s.lo == s.hi {
		return fmt.Sprintf("%.*f", prec, s.median)
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", prec, s.median, prec, s.lo, prec, s.hi)
}

func walls(ms []proc.Measurement) summary {
	v := make([]float64, 0, len(ms))
	for _, m := range ms {
		v = append(v, m.Wall.Seconds())
	}
	return summarize(v)
}

func peaks(ms []proc.Measurement) summary {
	v := make([]float64, 0, len(ms))
	for _, m := range ms {
		v = append(v, m.PeakMiB())
	}
	return summarize(v)
}

// verdict compares the medians with the targets of issue 3.
func verdict(ratio, planPeakMiB float64) string {
	var miss []string
	if ratio > targetRatio {
		miss = append(miss, fmt.Sprintf("%.2fx the baseline's time", ratio))
	}
	if planPeakMiB > targetPeakMiB {
		miss = append(miss, fmt.Sprintf("peak over %.0f MiB", targetPeakMiB))
	}
	if len(miss) == 0 {
		return "meets targets"
	}
	return "MISSES: " + strings.Join(miss, ", ")
}

// writeTable prints one line per store: medians of the repeats, with their
// range in parentheses when the repeats differ.
func writeTable(w io.Writer, results []storeResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "store\trows\tplan wall s\tplan peak MiB\tbaseline wall s\tbaseline peak MiB\tratio\tverdict")
	for _, r := range results {
		pw, pp, bw, bp := walls(r.Plan), peaks(r.Plan), walls(r.Base), peaks(r.Base)
		ratio := 0.0
		if bw.median > 0 {
			ratio = pw.median / bw.median
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.2f\t%s\n", r.Store, r.Rows,
			pw.cell(2), pp.cell(0), bw.cell(2), bp.cell(0), ratio, verdict(ratio, pp.median))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "targets: plan no slower than the baseline (ratio <= %.2f), plan peak under %.0f MiB; medians of %s\n",
		targetRatio, targetPeakMiB, repeats(results))
}

func repeats(results []storeResult) string {
	if len(results) == 0 || len(results[0].Plan) == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs, (min-max)", len(results[0].Plan))
}

// writeChecks prints every check and returns how many failed.
func writeChecks(w io.Writer, results []storeResult) int {
	failed := 0
	for _, r := range results {
		for _, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
				failed++
			}
			fmt.Fprintf(w, "%s %s: %s: %s\n", mark, r.Store, c.Name, c.Note)
		}
	}
	return failed
}
