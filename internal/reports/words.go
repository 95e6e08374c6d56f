package reports

import (
	"fmt"
	"strconv"
	"strings"
)

// section is one list of the HTML report: a heading, what it means, and
// the people (the first MaxListed; More counts the others) or rejected
// rows it names.
type section struct {
	ID      string
	Title   string
	Intro   string
	People  []Person
	More    int
	Rows    []Rejection
	Granted bool
}

// Headline says in one sentence what the export did to people: "3 people
// added (85.00 granted), 95 already there, 2 rows rejected". An export
// that could not be used, a safeguard stop and content processed before
// say that instead.
func Headline(s Summary) string {
	switch {
	case s.Duplicate && s.People.Empty():
		return "This export was processed before (the same content): nothing was changed."
	case s.Outcome == "safeguard" && s.Approval == nil:
		return "A safeguard stopped this export before anything was changed: nobody was added, changed or marked as left."
	case s.Late != nil && s.People == nil:
		return "This export was archived late, with the report of the run that sent it: nothing was sent again."
	case s.People == nil && s.Cause != "":
		if s.Cause == "" {
			return "This export could not be used: nothing was changed."
		}
		return "This export could not be used, so nothing was changed: " + s.Cause + "."
	}
	parts := peoplePhrases(s.People)
	if n := rejectedRows(s.Rejections); n > 0 {
		parts = append(parts, plural(n, "row", "rows")+" rejected")
	}
	if n := len(s.Held); n > 0 {
		parts = append(parts, plural(n, "person", "people")+" waiting for confirmation")
	}
	if len(parts) == 0 {
		return "Nothing changed: the export lists nobody new, changed or gone."
	}
	return upperFirst(strings.Join(parts, ", ")) + "."
}

// peoplePhrases are the parts of the headline that count people.
func peoplePhrases(p *People) []string {
	if p == nil {
		return nil
	}
	var parts []string
	if n := p.Added.Len(); n > 0 {
		parts = append(parts, fmt.Sprintf("%s added (%s granted)", plural(n, "person", "people"), Money(p.Granted)))
	}
	for _, c := range []struct {
		n    int
		verb string
	}{{len(p.Changed), "changed"}, {len(p.CameBack), "came back"}, {len(p.Left), "left"}, {p.AlreadyThereCount, "already there"}} {
		if c.n > 0 {
			parts = append(parts, plural(c.n, "person", "people")+" "+c.verb)
		}
	}
	return parts
}

// sections are the report's lists, in the order an HR admin reads them;
// a list with nobody in it is left out. After a safeguard stop they say
// what would have happened.
func sections(s Summary) []section {
	var out []section
	if p := s.People; p != nil {
		would := s.Outcome == "safeguard" && s.Approval == nil
		for _, l := range peopleLists(p, would) {
			if l.count == 0 {
				continue
			}
			sec := section{ID: l.id, Title: fmt.Sprintf("%s (%d)", l.title, l.count), Intro: l.intro, Granted: l.id == "added"}
			sec.People = l.people[:min(len(l.people), MaxListed)]
			sec.More = l.count - len(sec.People)
			out = append(out, sec)
		}
	}
	if n := rejectedRows(s.Rejections); n > 0 {
		intro := "These rows of the export could not be used; nobody was added or changed from them."
		if len(s.Rejections) > n {
			intro += " Some rows have several problems: each problem is on a line of its own."
		}
		if s.RejectsFile != "" {
			intro += " Fix them in " + s.RejectsFile + " (beside this report) and drop that file again: only its rows are read, and nobody is marked as left."
		}
		out = append(out, section{ID: "rejected", Title: fmt.Sprintf("Rejected rows (%d)", n), Intro: intro, Rows: s.Rejections})
	}
	if n := len(s.Held); n > 0 {
		sec := section{ID: "waiting", Title: fmt.Sprintf("Waiting for confirmation (%d)", n),
			Intro: "The platform did not answer clearly for these people: they may already exist on the platform. " +
				"Their grant waits for confirmation, so that nobody is granted twice; your hrsync operator confirms it with the platform."}
		for _, id := range s.Held[:min(n, MaxListed)] {
			sec.People = append(sec.People, Person{ExternalID: id})
		}
		sec.More = n - len(sec.People)
		out = append(out, sec)
	}
	return out
}

// list is one kind of people of an export, in the report's words.
type list struct {
	id, title, intro string
	people           []Person
	count            int
}

// peopleLists names each kind of people; would words them for a run a
// safeguard stopped.
func peopleLists(p *People, would bool) []list {
	if would {
		return []list{
			{"added", "Would have been added", "These people are new in the export; they were not added.", p.Added.First(MaxListed), p.Added.Len()},
			{"changed", "Would have been changed", "Their details differ in the export; nothing was changed.", p.Changed, len(p.Changed)},
			{"cameBack", "Would have come back", "They had left and are listed again; nothing was changed.", p.CameBack, len(p.CameBack)},
			{"left", "Would have left", "The export no longer lists them; nobody was marked as left.", p.Left, len(p.Left)},
			{"alreadyThere", "Already there", "The export lists them as they already are.", p.AlreadyThere, p.AlreadyThereCount},
		}
	}
	return []list{
		{"added", "Added", "New people, added to the platform with the amount granted.", p.Added.First(MaxListed), p.Added.Len()},
		{"changed", "Changed", "People whose details changed in the export; their record was updated.", p.Changed, len(p.Changed)},
		{"cameBack", "Came back", "People who had left and are listed again.", p.CameBack, len(p.CameBack)},
		{"left", "Left", "People the export no longer lists: marked as left (they are not deleted).", p.Left, len(p.Left)},
		{"alreadyThere", "Already there", "People the export lists as they already are: nothing to do for them.", p.AlreadyThere, p.AlreadyThereCount},
	}
}

// Money renders an amount with two decimals, never in scientific notation.
func Money(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// plural renders n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Sentence joins the parts of a next step with "; ", its first letter
// capitalised.
func Sentence(parts []string) string { return upperFirst(strings.Join(parts, "; ")) }

// upperFirst capitalises the first letter of an ASCII sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// rejectedRows counts the rows of an export's rejections: the lines they
// name, each once (a row may have several problems; one without a line is
// a row of its own).
func rejectedRows(rs []Rejection) int {
	lines := map[int]bool{}
	n := 0
	for _, r := range rs {
		if r.Line > 0 && lines[r.Line] {
			continue
		}
		lines[r.Line] = true
		n++
	}
	return n
}
