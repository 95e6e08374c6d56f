package notify

import (
	"fmt"
	"slices"
	"strings"
)

// Title is the message's one-line summary: "hrsync people acme: attention
// (employees.csv)".
func Title(e Event) string {
	t := fmt.Sprintf("hrsync %s %s: %s", e.Job, e.Tenant, e.Outcome)
	if len(e.Files) > 0 {
		names := make([]string, 0, len(e.Files))
		for _, f := range e.Files {
			names = append(names, f.Name)
		}
		t += " (" + strings.Join(names, ", ") + ")"
	}
	return t
}

// Text renders the event as plain text, the body of an e-mail and of the
// chat payloads: in the words of the reports, without the counts (they
// are in the generic webhook's JSON).
func Text(e Event) string {
	var b strings.Builder
	b.WriteString(Title(e) + "\n\n")
	b.WriteString("What happened: " + e.Cause + "\n")
	if e.Next != "" {
		b.WriteString("Next step: " + e.Next + "\n")
	}
	if len(e.Stops) > 0 {
		b.WriteString("\nSafeguard stops:\n")
		for _, s := range e.Stops {
			b.WriteString("- " + s + "\n")
		}
	}
	if len(e.Files) > 0 {
		b.WriteString("\nFiles:\n")
		for _, f := range e.Files {
			fmt.Fprintf(&b, "- %s: %s", f.Name, f.Outcome)
			if f.ArchivedAs != "" {
				b.WriteString(", archived as " + f.ArchivedAs)
			}
			b.WriteString("\n")
			for _, r := range f.Reports {
				b.WriteString("  report: " + r + "\n")
			}
		}
	}
	if len(e.Rejections) > 0 {
		b.WriteString("\nProblems of the rejected rows (one line each):\n")
		for _, r := range e.Rejections {
			fmt.Fprintf(&b, "- %s line %d", r.File, r.Line)
			if r.Column != "" {
				b.WriteString(", " + r.Column)
			}
			b.WriteString(": " + r.Reason + "\n")
		}
		if e.MoreRejections > 0 {
			fmt.Fprintf(&b, "- and %d more (see the reports)\n", e.MoreRejections)
		}
	}
	if len(e.Held) > 0 {
		b.WriteString("\nWaiting for confirmation (they may already exist on the platform; their grant waits): " + strings.Join(e.Held, ", "))
		if e.MoreHeld > 0 {
			fmt.Fprintf(&b, " and %d more", e.MoreHeld)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// CountsText renders the non-zero counts that keep accepts (nil keeps
// every one) as "key=n" pairs sorted by key; "" when none is left.
func CountsText(counts map[string]int, keep func(string) bool) string {
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		if v != 0 && (keep == nil || keep(k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	return strings.Join(parts, " ")
}
