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

// writeTable prints one line per store and state of the plan (no
// snapshot: the plan scans the state; a valid snapshot): medians of the
// repeats, with their range in parentheses when the repeats differ, and
// each one's ratio to the baselines measured beside it. Summary lines
// follow, one per store.
func writeTable(w io.Writer, results []storeResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "store\tstate\trows\tplan wall s\tplan peak MiB\tbaseline wall s\tbaseline peak MiB\tratio\tverdict")
	for _, r := range results {
		for _, l := range r.lines() {
			pw, pp, bw, bp := walls(l.plan), peaks(l.plan), walls(l.base), peaks(l.base)
			ratio := l.ratio()
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.2f\t%s\n", r.Store, l.state, r.Rows,
				pw.cell(2), pp.cell(0), bw.cell(2), bp.cell(0), ratio, verdict(ratio, pp.median))
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "targets: plan no slower than the baseline (ratio <= %.2f), plan peak under %.0f MiB; medians of %s\n",
		targetRatio, targetPeakMiB, repeats(results))
	for _, r := range results {
		var parts []string
		for _, l := range r.lines() {
			parts = append(parts, fmt.Sprintf("%s %.2fx the baseline (plan %.2fs, baseline %.2fs)",
				l.state, l.ratio(), walls(l.plan).median, walls(l.base).median))
		}
		fmt.Fprintf(w, "%s: %s\n", r.Store, strings.Join(parts, "; "))
		writeSteady(w, r)
		writeProcs(w, r)
		writeImport(w, r)
	}
}

// meets names how a figure compares with its target.
func meets(ok bool) string {
	if ok {
		return "meets"
	}
	return "MISSES"
}

// writeProcs prints the snapshot plan's wall time with GOMAXPROCS=2 over
// its wall time with GOMAXPROCS=1 (medians).
func writeProcs(w io.Writer, r storeResult) {
	if len(r.Procs[0]) == 0 || len(r.Procs[1]) == 0 {
		return
	}
	one, two := walls(r.Procs[0]), walls(r.Procs[1])
	ratio := two.median / one.median
	fmt.Fprintf(w, "%s: snapshot plan at GOMAXPROCS=1 %ss, at GOMAXPROCS=2 %ss: wall(2)/wall(1) = %.2f; %s the target (<= %.2f)\n",
		r.Store, one.cell(2), two.cell(2), ratio, meets(ratio <= targetProcsRatio), targetProcsRatio)
}

// writeImport prints the first import's plans (the highest peak of the
// repeats against the target) and its run.
func writeImport(w io.Writer, r storeResult) {
	if len(r.Import) == 0 {
		return
	}
	pp := peaks(r.Import)
	fmt.Fprintf(w, "%s: first import plan (%d new people, empty state): %ss, peak %s MiB; %s the target (peak <= %.0f MiB)\n",
		r.Store, r.ImportRows, walls(r.Import).cell(2), pp.cell(0), meets(pp.hi <= targetImportPeakMiB), targetImportPeakMiB)
	if m := r.ImportRun; m != nil {
		fmt.Fprintf(w, "%s: first import run of %d rows (emulated API): %.2fs, peak %.0f MiB; %s the target (peak <= %.0f MiB)\n",
			r.Store, r.ImportRunRows, m.Wall.Seconds(), m.PeakMiB(), meets(m.PeakMiB() <= targetImportPeakMiB), targetImportPeakMiB)
	}
}

// targetSteady is the most a run with no change may take, with a current
// snapshot, over the snapshot plan's wall time (issue 22).
const targetSteady = 1.5

// writeSteady prints the no-change runs with a current snapshot against
// the plans from the snapshot.
func writeSteady(w io.Writer, r storeResult) {
	if len(r.Steady) == 0 || len(r.SnapPlan) == 0 {
		return
	}
	sw, pw := walls(r.Steady), walls(r.SnapPlan)
	ratio := sw.median / pw.median
	mark := "meets"
	if ratio > targetSteady {
		mark = "MISSES"
	}
	fmt.Fprintf(w, "%s: run people with no change, snapshot current: %ss, peak %s MiB = %.2fx the snapshot plan's wall (%.2fs); %s the target (<= %.1fx)\n",
		r.Store, sw.cell(2), peaks(r.Steady).cell(0), ratio, pw.median, mark, targetSteady)
}

// line is one line of the table: the plans of one state of the plan's
// state, with their baselines.
type line struct {
	state      string
	plan, base []proc.Measurement
}

// ratio is the plans' median wall time over the baselines'.
func (l line) ratio() float64 {
	if bw := walls(l.base).median; bw > 0 {
		return walls(l.plan).median / bw
	}
	return 0
}

// lines are the table's lines of r: the plans that scan the state, then
// those from a snapshot when they were measured.
func (r storeResult) lines() []line {
	out := []line{{state: stateScan, plan: r.Plan, base: r.Base}}
	if len(r.SnapPlan) > 0 {
		out = append(out, line{state: stateSnapshot, plan: r.SnapPlan, base: r.SnapBase})
	}
	return out
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
