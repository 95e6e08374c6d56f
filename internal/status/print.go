package status

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"hrsync/internal/textfmt"
	"hrsync/store"
)

// Column caps of the text output, so that every line fits textfmt.Width:
// a long tenant, rule or collection name is cut (in full in the JSON and
// the details).
const (
	tenantCap = 24
	ruleCap   = 30
)

// PrintOptions are how Print shows a status.
type PrintOptions struct {
	// Now is the time the ages of the runs are counted from.
	Now time.Time
	// Details adds, after the tables, each run's and each source
	// problem's full text, wrapped (status --tenant).
	Details bool
}

// Print prints the status as tables of at most textfmt.Width columns:
// one line per run (job, tenant, outcome, age, a short cause), one line
// per tenant (its source and backlog), then the source problems, the
// reports, the personalizations and the grant rules. A long cell is cut;
// the full text is in the JSON and, with opts.Details, after the tables.
func Print(w io.Writer, rep *Report, opts PrintOptions) error {
	steps := []func(io.Writer, *Report, PrintOptions) error{printRuns, printTenants, printProblems,
		printApprovals, printReports, printPersonalizations, printGrantRules}
	if opts.Details {
		steps = append(steps, printDetails)
	}
	for _, step := range steps {
		if err := step(w, rep, opts); err != nil {
			return fmt.Errorf("print status: %w", err)
		}
	}
	return nil
}

// printRuns prints the last run of each job and tenant, one line each.
func printRuns(w io.Writer, rep *Report, opts PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "JOB", "OUTCOME", "AGE", "CAUSE")
	if len(rep.Runs) == 0 {
		t.Row("(no run yet)", "", "", "", "")
	}
	for _, r := range rep.Runs {
		t.Row(r.Tenant, r.Job, r.Outcome, age(opts.Now, r.StartedAt), runCause(r))
	}
	return t.Print(w)
}

// runCause is a run's cause in a few words: its error, else its counts
// that are not zero.
func runCause(r Run) string {
	if r.Error != "" {
		return r.Error
	}
	nonZero := map[string]int{}
	for k, n := range r.Counts {
		if n != 0 {
			nonZero[k] = n
		}
	}
	if c := textfmt.Counts(nonZero); c != "" {
		return c
	}
	return "-"
}

// age says how long ago t was, in its largest unit: "40s", "12m", "5h", "3d".
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// printTenants prints each tenant's source (its kind, and PROBLEM when it
// cannot be used) and backlog, one line each; n/a for the files of a
// source without a drop folder.
func printTenants(w io.Writer, rep *Report, _ PrintOptions) error {
	fmt.Fprintln(w)
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "SOURCE", "HELD", "WAITING", "PROCESSED", "FAILED", "PERSONALIZING", "POLLED")
	na := func(p *int) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprint(*p)
	}
	for _, tn := range rep.Tenants {
		source, waiting, processed, failed := tn.Source, "n/a", "n/a", "n/a"
		switch {
		case len(tn.SourceProblems) > 0:
			source, waiting, processed, failed = tn.Source+" PROBLEM", "?", "?", "?"
		case tn.Files != nil:
			waiting, processed, failed = fmt.Sprint(tn.Files.Waiting), fmt.Sprint(tn.Files.Processed), fmt.Sprint(tn.Files.Failed)
		}
		t.Row(tn.Name, source, fmt.Sprint(tn.HeldGrants), waiting, processed, failed,
			na(tn.PersonalizationsPending), na(tn.OrdersPolling))
	}
	return t.Print(w)
}

// printProblems prints each tenant's source problems, one line each.
func printProblems(w io.Writer, rep *Report, _ PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "SOURCE PROBLEM")
	for _, tn := range rep.Tenants {
		for _, p := range tn.SourceProblems {
			t.Row(tn.Name, p)
		}
	}
	return section(w, &t)
}

// printApprovals says, for each tenant with a drop folder, what becomes of
// the files in approve/: taken by the next run, or left alone while
// approval from the drop folder is off.
func printApprovals(w io.Writer, rep *Report, _ PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "FILES IN APPROVE/")
	for _, tn := range rep.Tenants {
		switch {
		case tn.Files == nil:
		case !tn.ApproveFromDropFolder:
			t.Row(tn.Name, fmt.Sprintf("%d, left alone: approval from the drop folder is off", tn.Files.Approve))
		case tn.Files.Approve > 0:
			t.Row(tn.Name, fmt.Sprintf("%d, for the next run", tn.Files.Approve))
		}
	}
	return section(w, &t)
}

// printReports prints the reports beside each run's export, one line each.
func printReports(w io.Writer, rep *Report, _ PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "JOB", "REPORT (IN THE DROP FOLDER)")
	for _, r := range rep.Runs {
		for _, name := range r.Reports {
			t.Row(r.Tenant, r.Job, name)
		}
	}
	return section(w, &t)
}

// printPersonalizations prints pending, done and failed personalizations
// per tenant and collection, when there are any.
func printPersonalizations(w io.Writer, rep *Report, _ PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap}}
	t.Row("TENANT", "COLLECTION", "PENDING", "DONE", "FAILED")
	for _, tn := range rep.Tenants {
		collections := make([]string, 0, len(tn.Personalizations))
		for c := range tn.Personalizations {
			collections = append(collections, c)
		}
		sort.Strings(collections)
		for _, c := range collections {
			k := tn.Personalizations[c]
			t.Row(tn.Name, c,
				fmt.Sprint(k[string(store.PersonalizationPending)]+k[string(store.PersonalizationRetry)]),
				fmt.Sprint(k[string(store.PersonalizationDone)]),
				fmt.Sprint(k[string(store.PersonalizationError)]+k[string(store.PersonalizationFailed)]))
		}
	}
	return section(w, &t)
}

// printGrantRules prints the last day processed per rule, when any tenant
// has rules.
func printGrantRules(w io.Writer, rep *Report, _ PrintOptions) error {
	t := textfmt.Table{Caps: []int{tenantCap, ruleCap}}
	t.Row("TENANT", "GRANT RULE", "LAST DAY PROCESSED")
	for _, tn := range rep.Tenants {
		for _, r := range tn.GrantRules {
			last := "never"
			if r.LastDay != nil {
				last = *r.LastDay
			}
			t.Row(tn.Name, r.Rule, last)
		}
	}
	return section(w, &t)
}

// section prints t after a blank line, when it has a row below its heading.
func section(w io.Writer, t *textfmt.Table) error {
	if t.Rows() == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return t.Print(w)
}

// printDetails prints each run and each source problem in full, wrapped
// at textfmt.Width.
func printDetails(w io.Writer, rep *Report, _ PrintOptions) error {
	var lines []string
	add := func(label, text string) {
		lines = append(lines, textfmt.Wrap(text, textfmt.Width, label, "    ")...)
	}
	for _, r := range rep.Runs {
		lines = append(lines, "")
		add("", fmt.Sprintf("%s %s: %s", r.Job, r.Tenant, r.Outcome))
		add("  run: ", r.RunID)
		add("  started: ", r.StartedAt.Format(time.RFC3339))
		if r.FinishedAt != nil {
			add("  took: ", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String())
		}
		if c := textfmt.Counts(r.Counts); c != "" {
			add("  counts: ", c)
		}
		if r.Error != "" {
			add("  cause: ", r.Error)
		}
		for _, name := range r.Reports {
			add("  report: ", name)
		}
	}
	for _, tn := range rep.Tenants {
		for _, p := range tn.SourceProblems {
			lines = append(lines, "")
			add("", "source of "+tn.Name+": "+p)
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}
