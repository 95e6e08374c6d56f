package people

import (
	"encoding/binary"
	"errors"
	"iter"
	"math"
	"runtime"
	"time"

	"hrsync/model"
	"hrsync/sources"
)

// People is a list of person records kept compactly, each with the hashes
// the plan compares it by (sources.Hashes): each record encoded back to
// back in slabs of bytes, about 120 bytes a person where a slice
// of model.Person holds several hundred (the struct, and the whole CSV
// record its strings point into). A first import lists every person of
// the export as new, so this is what keeps its memory in bounds.
//
// The zero value is an empty list. People is not safe for concurrent use.
type People struct {
	// recordSlabs holds the records; every method that reads a slab keeps
	// the list alive until it is done (runtime.KeepAlive).
	recordSlabs
	at []uint64 // per person: slab index << 32 | offset in the slab
}

// slabSize is the size of one slab; a person never spans two.
const slabSize = 1 << 20

// Len returns the number of people in the list.
func (l *People) Len() int { return len(l.at) }

// Add appends p, with its hashes h.
func (l *People) Add(p model.Person, h sources.Hashes) {
	var buf [512]byte // most records fit: no garbage per person
	slab, off := l.add(appendPerson(buf[:0], p, h))
	l.at = append(l.at, uint64(slab)<<32|uint64(off))
}

// At returns the i-th person.
func (l *People) At(i int) model.Person {
	p, _ := l.hashedAt(i)
	return p
}

// hashedAt returns the i-th person and their hashes.
func (l *People) hashedAt(i int) (model.Person, sources.Hashes) {
	p, h, _, err := decodePerson(l.record(i))
	if err != nil {
		panic("people list: " + err.Error()) // written by Add: cannot happen
	}
	runtime.KeepAlive(l)
	return p, h
}

// record returns the bytes of the i-th person's record (from its start to
// its slab's end), valid while l is alive.
func (l *People) record(i int) []byte {
	a := l.at[i]
	return l.slabs[a>>32][a&math.MaxUint32:]
}

// fieldsAt returns the flags of the i-th person's record and its bytes from
// the first string of appendPerson on (past its line and its hashes), for
// the readers that decode one field alone.
func (l *People) fieldsAt(i int) (flags byte, fields []byte) {
	b := l.record(i)
	_, n := binary.Uvarint(b[1:])
	return b[0], b[1+n+24:]
}

// All yields the people in order.
func (l *People) All() iter.Seq2[int, model.Person] {
	return func(yield func(int, model.Person) bool) {
		for i := range l.at {
			if !yield(i, l.At(i)) {
				return
			}
		}
	}
}

// Slice returns the people from index start up to end as a slice.
func (l *People) Slice(start, end int) []model.Person {
	out := make([]model.Person, 0, end-start)
	for i := start; i < end; i++ {
		out = append(out, l.At(i))
	}
	return out
}

// Filter keeps the people keep says yes to (given each person's hashes),
// in order. It moves the kept records down in place, so it needs no second
// copy of the list: a record is never written past the place it is read
// from.
func (l *People) Filter(keep func(model.Person, sources.Hashes) bool) {
	kept, ws, wo := 0, 0, 0 // records kept, and where the next one goes
	for _, a := range l.at {
		slab, off := int(a>>32), int(a&math.MaxUint32)
		p, h, n, err := decodePerson(l.slabs[slab][off:])
		if err != nil {
			panic("people list: " + err.Error()) // written by Add: cannot happen
		}
		if !keep(p, h) {
			continue
		}
		for wo+n > cap(l.slabs[ws]) {
			ws, wo = ws+1, 0 // never past the slab read from, which holds n bytes
		}
		dst := l.slabs[ws][:max(len(l.slabs[ws]), wo+n)]
		copy(dst[wo:wo+n], l.slabs[slab][off:off+n])
		l.slabs[ws] = dst
		l.at[kept] = uint64(ws)<<32 | uint64(wo)
		kept, wo = kept+1, wo+n
	}
	runtime.KeepAlive(l)
	if kept == 0 {
		*l = People{}
		return
	}
	l.slabs[ws] = l.slabs[ws][:wo]
	clear(l.slabs[ws+1:])
	clear(l.owners[ws+1:])
	l.slabs, l.owners, l.at = l.slabs[:ws+1], l.owners[:ws+1], l.at[:kept]
}

// Person record flags.
const (
	hasStart    = 1 << iota // StartDate is set
	hasBirth                // BirthDate is set
	hasBalance              // AddBalance is set
	hasBirthday             // BirthMonth and BirthDay are set (a birthday without its year)
)

// appendPerson encodes p: flags, line, the three hashes (h), the six
// strings (length-prefixed), the dates (days since 1970), the balance's
// bits and a birthday without its year (month and day, a byte each).
func appendPerson(b []byte, p model.Person, h sources.Hashes) []byte {
	var flags byte
	if !p.StartDate.IsZero() {
		flags |= hasStart
	}
	if !p.BirthDate.IsZero() {
		flags |= hasBirth
	}
	if p.AddBalance != nil {
		flags |= hasBalance
	}
	if p.BirthMonth != 0 {
		flags |= hasBirthday
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(p.Line))
	b = binary.LittleEndian.AppendUint64(b, h.ID)
	b = binary.LittleEndian.AppendUint64(b, h.Email)
	b = binary.LittleEndian.AppendUint64(b, h.Fields)
	for _, s := range [...]string{p.ExternalID, p.Email, p.FirstName, p.LastName, p.Department, p.Location} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if flags&hasStart != 0 {
		b = binary.AppendVarint(b, days(p.StartDate))
	}
	if flags&hasBirth != 0 {
		b = binary.AppendVarint(b, days(p.BirthDate))
	}
	if flags&hasBalance != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*p.AddBalance))
	}
	if flags&hasBirthday != 0 {
		b = append(b, byte(p.BirthMonth), byte(p.BirthDay))
	}
	return b
}

// days is the count of days from 1970-01-01 to t's date (a UTC midnight).
func days(t time.Time) int64 { return t.Unix() / 86400 }

var errShort = errors.New("record cut short")

// decodePerson decodes the record at the start of b, with its hashes, and
// says how many bytes it took.
func decodePerson(b []byte) (model.Person, sources.Hashes, int, error) {
	var (
		p model.Person
		h sources.Hashes
	)
	whole := len(b)
	if len(b) < 1 {
		return p, h, 0, errShort
	}
	flags := b[0]
	b = b[1:]
	line, n := binary.Uvarint(b)
	if n <= 0 || len(b) < n+24 {
		return p, h, 0, errShort
	}
	p.Line = int(line)
	b = b[n:]
	h = sources.Hashes{
		ID:     binary.LittleEndian.Uint64(b),
		Email:  binary.LittleEndian.Uint64(b[8:]),
		Fields: binary.LittleEndian.Uint64(b[16:]),
	}
	b = b[24:]
	// The externalId is a string of its own: the plan and the run keep it
	// (in its lists of changed people, in the birthdays they record) long
	// after the rest. The five others are copied out in one piece (one
	// allocation instead of five), each a part of it.
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return p, h, 0, errShort
	}
	p.ExternalID, b = string(b[n:n+int(l)]), b[n+int(l):]
	var spans [5][2]int
	end := 0
	for i := range spans {
		l, n := binary.Uvarint(b[end:])
		if n <= 0 || uint64(len(b)-end-n) < l {
			return p, h, 0, errShort
		}
		spans[i] = [2]int{end + n, end + n + int(l)}
		end += n + int(l)
	}
	rest := string(b[:end])
	for i, s := range [...]*string{&p.Email, &p.FirstName, &p.LastName, &p.Department, &p.Location} {
		*s = rest[spans[i][0]:spans[i][1]]
	}
	b = b[end:]
	for _, d := range []struct {
		flag byte
		t    *time.Time
	}{{hasStart, &p.StartDate}, {hasBirth, &p.BirthDate}} {
		if flags&d.flag == 0 {
			continue
		}
		v, n := binary.Varint(b)
		if n <= 0 {
			return p, h, 0, errShort
		}
		*d.t = time.Unix(v*86400, 0).UTC()
		b = b[n:]
	}
	if flags&hasBalance != 0 {
		if len(b) < 8 {
			return p, h, 0, errShort
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		p.AddBalance = &v
		b = b[8:]
	}
	if flags&hasBirthday != 0 {
		if len(b) < 2 {
			return p, h, 0, errShort
		}
		p.BirthMonth, p.BirthDay = time.Month(b[0]), int(b[1])
		b = b[2:]
	}
	return p, h, whole - len(b), nil
}
