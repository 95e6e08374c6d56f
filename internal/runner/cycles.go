package runner

import "hrsync/store"

// WorstOfCycles keeps, of runs read newest first, one run per cycle: the
// worst run of each cycle that recorded several (Run.Cycle; the first
// recorded of those that ended worst, as the cycle's last line names it),
// in the place of the cycle's newest run, and every run without a cycle.
// What status shows and the metrics a restart reads then say what each
// cycle's exit code said.
func WorstOfCycles(runs []store.RunRecord) []store.RunRecord {
	worst := map[string]store.RunRecord{}
	for _, r := range runs { // newest first: an older run of equal rank wins
		if w, seen := worst[r.Cycle]; r.Cycle != "" && (!seen || Rank(r.Outcome) >= Rank(w.Outcome)) {
			worst[r.Cycle] = r
		}
	}
	out := make([]store.RunRecord, 0, len(runs))
	placed := map[string]bool{}
	for _, r := range runs {
		switch {
		case r.Cycle == "":
			out = append(out, r)
		case !placed[r.Cycle]:
			placed[r.Cycle] = true
			out = append(out, worst[r.Cycle])
		}
	}
	return out
}
