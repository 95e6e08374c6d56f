// Package gen generates deterministic, fictional HR exports for the people
// sync benchmark: a base population (the "previous" export, which state is
// seeded from) and a next export that changes, removes and adds a known
// share of people. Person i is a pure function of i, so a generated file and
// a seeded state agree without holding either in memory.
//
// Every value is already in the normal form hrsync's CSV reader produces
// (trimmed text, lower-case e-mail, dates as UTC midnight), so a person's
// sources.Fingerprint computed here equals the one computed from the file.
package gen

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"hrsync/model"
)

// Header returns the header row of a generated export: each field under
// its own name, which is the default column mapping of hrsync's
// configuration.
func Header() []string {
	return []string{
		"externalId", "email", "firstName", "lastName", "department", "location",
		"startDate", "birthDate", "addBalance",
	}
}

// Invented names and places; none names a real person. Fixed tables, never written.
//
//nolint:gochecknoglobals // constant lookup tables (Go has no constant arrays)
var (
	firstNames = [...]string{
		"Aldo", "Brisa", "Cato", "Delphine", "Emeka", "Fenna", "Gaspard", "Hanne",
		"Ilario", "Jorun", "Kalani", "Liesel", "Maren", "Noor", "Odalys", "Pim",
		"Quilla", "Rasmus", "Selin", "Tobiah", "Ulla", "Vesna", "Wendel", "Xiomara",
		"Yannick", "Zoë", "Anouk", "Bertil", "Chiara", "Dorian", "Elif", "Faro",
	}
	lastNames = [...]string{
		"Abernathy", "Brightwater", "Castellan", "Dunmore", "Eskildsen", "Fairbrook",
		"Galloway", "Holmqvist", "Ironwood", "Jansen-Voss", "Kettleby", "Larkspur",
		"Marchetti", "Northcott", "O'Farrell", "Pennington", "Quartermaine", "Rosendahl",
		"Silverton", "Thistlewood", "Underhill", "Vantongeren", "Whitlock", "Yarborough",
	}
	departments = [...]string{
		"Engineering", "Sales", "Marketing", "Finance", "People", "Legal",
		"Research, Development", "Support", "Operations", "Design",
	}
	locations = [...]string{
		"Lisbon", "Montréal", "Osaka", "Nairobi", "Tallinn", "Valparaíso",
		"Reykjavík", "Hobart", "Remote",
	}
)

// Epochs of the generated dates.
//
//nolint:gochecknoglobals // constants in all but name (time.Time cannot be a const)
var (
	birthFrom = time.Date(1960, time.January, 1, 0, 0, 0, 0, time.UTC)
	startTo   = time.Date(2024, time.December, 31, 0, 0, 0, 0, time.UTC)
)

// mix is SplitMix64's finalizer: a cheap, well-spread hash of i.
func mix(i uint64) uint64 {
	z := i + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// ExternalID is the externalId of person i.
func ExternalID(i int) string {
	return fmt.Sprintf("E%08d", i+1)
}

// Person returns person i (i >= 0) of the generated population. The same i
// always gives the same person.
func Person(i int) model.Person {
	h := mix(uint64(i))
	first := firstNames[h%uint64(len(firstNames))]
	last := lastNames[(h>>8)%uint64(len(lastNames))]
	birth := birthFrom.AddDate(0, 0, int((h>>16)%14600)) // up to 40 years later
	start := birth.AddDate(22, 0, int((h>>32)%9000))
	if start.After(startTo) {
		start = startTo.AddDate(0, 0, -int((h>>40)%365))
	}
	id := ExternalID(i)
	p := model.Person{
		ExternalID: id,
		Email:      emailOf(first, last, id),
		FirstName:  first,
		LastName:   last,
		Department: departments[(h>>48)%uint64(len(departments))],
		Location:   locations[(h>>56)%uint64(len(locations))],
		StartDate:  start,
		BirthDate:  birth,
	}
	if h%10 == 0 {
		b := float64(25 + 25*((h>>4)%4))
		p.AddBalance = &b
	}
	return p
}

// emailOf builds a unique, lower-case, ASCII address on a reserved domain.
func emailOf(first, last, id string) string {
	b := make([]byte, 0, len(first)+len(last)+len(id)+16)
	for _, s := range []string{first, ".", last, ".", id} {
		for _, r := range s {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.':
				b = append(b, byte(r))
			case r >= 'A' && r <= 'Z':
				b = append(b, byte(r-'A'+'a'))
			case r == 'ë':
				b = append(b, 'e')
			}
		}
	}
	return string(append(b, "@example.com"...))
}

// Change returns p with a changed department, so its fingerprint changes
// but its externalId and e-mail stay.
func Change(p model.Person) model.Person {
	p.Department = "Moved from " + p.Department
	return p
}

// Delta says how the next export differs from the previous one of n
// people. A share of zero (or less) disables that kind of difference.
type Delta struct {
	// ChangeEvery changes one person in every ChangeEvery (the last of each
	// group).
	ChangeEvery int
	// RemoveEvery leaves one person in every RemoveEvery out of the next
	// export (the middle one of each group), so they depart.
	RemoveEvery int
	// Add appends this many new people after the previous ones.
	Add int
}

// DefaultDelta changes 1% of the people, removes 0.5% and adds 1%.
func DefaultDelta(n int) Delta {
	return Delta{ChangeEvery: 100, RemoveEvery: 200, Add: n / 100}
}

func (d Delta) changed(i int) bool {
	return d.ChangeEvery > 0 && i%d.ChangeEvery == d.ChangeEvery-1
}

func (d Delta) removed(i int) bool {
	return d.RemoveEvery > 0 && i%d.RemoveEvery == d.RemoveEvery/2 && !d.changed(i)
}

// Counts is what a correct diff of the next export against the previous one
// finds.
type Counts struct {
	Rows      int // rows of the next export
	Unchanged int
	Changed   int
	New       int
	Departed  int
}

// Expect counts what the next export of n people under d holds.
func (d Delta) Expect(n int) Counts {
	var c Counts
	for i := range n {
		switch {
		case d.removed(i):
			c.Departed++
		case d.changed(i):
			c.Changed++
		default:
			c.Unchanged++
		}
	}
	c.New = max(d.Add, 0)
	c.Rows = c.Unchanged + c.Changed + c.New
	return c
}

// Previous yields the n people of the previous export, in order.
func Previous(n int) iter.Seq[model.Person] {
	return func(yield func(model.Person) bool) {
		for i := range n {
			if !yield(Person(i)) {
				return
			}
		}
	}
}

// Next yields the next export of n previous people under d, in order: the
// previous people less the removed ones, some changed, then the new ones.
func (d Delta) Next(n int) iter.Seq[model.Person] {
	return func(yield func(model.Person) bool) {
		for i := range n {
			if d.removed(i) {
				continue
			}
			p := Person(i)
			if d.changed(i) {
				p = Change(p)
			}
			if !yield(p) {
				return
			}
		}
		for i := n; i < n+max(d.Add, 0); i++ {
			if !yield(Person(i)) {
				return
			}
		}
	}
}

// WriteCSV writes people as a UTF-8, comma-separated export with Header,
// dates in ISO 8601, and returns the number of data rows written.
func WriteCSV(w io.Writer, people iter.Seq[model.Person]) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	head := Header()
	if err := cw.Write(head); err != nil {
		return 0, fmt.Errorf("write header: %w", err)
	}
	rec := make([]string, len(head))
	n := 0
	for p := range people {
		rec[0], rec[1], rec[2], rec[3] = p.ExternalID, p.Email, p.FirstName, p.LastName
		rec[4], rec[5] = p.Department, p.Location
		rec[6], rec[7] = dateText(p.StartDate), dateText(p.BirthDate)
		rec[8] = ""
		if p.AddBalance != nil {
			rec[8] = strconv.FormatFloat(*p.AddBalance, 'f', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return n, fmt.Errorf("write row %d: %w", n+1, err)
		}
		n++
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return n, fmt.Errorf("write csv: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write csv: %w", err)
	}
	return n, nil
}

func dateText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(model.DateLayout)
}
