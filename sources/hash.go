package sources

import (
	"time"

	"github.com/cespare/xxhash/v2"

	"hrsync/model"
)

// Hashes are 64-bit hashes of a checked person record (xxhash64): of its
// externalId and e-mail (KeyHash) and the fingerprint of every field
// (Fingerprint). Run computes them on its workers, in parallel with the
// other rows, and hands them to Handler.AcceptHashed and the Keys. A zero
// value means "not computed".
type Hashes struct {
	ID     uint64
	Email  uint64
	Fields uint64
}

// hashesOf returns the hashes of a person Check returned: of the keys it
// holds, and of its fields when the row is good (whole).
func hashesOf(p *model.Person, whole bool) Hashes {
	var h Hashes
	if p.ExternalID != "" {
		h.ID = KeyHash(p.ExternalID)
	}
	if p.Email != "" {
		h.Email = KeyHash(p.Email)
	}
	if whole {
		h.Fields = Fingerprint(*p)
	}
	return h
}

// KeyHash is the 64-bit hash (xxhash64) of a normalized externalId or
// e-mail, the form in which hrsync compares keys in bulk.
func KeyHash(s string) uint64 { return xxhash.Sum64String(s) }

// fieldSep ends each field in a Fingerprint.
const fieldSep = "\x1f"

// Fingerprint is the hash of a person's normalized fields; a change of any
// field but the balance changes it. Birth dates (or birthdays without their
// year) take part only through this hash, which is what hrsync's state
// keeps of them.
func Fingerprint(p model.Person) uint64 {
	// The fields go into one buffer and are hashed at once: the same
	// bytes as writing them one by one to an xxhash.Digest, for less.
	var stack [320]byte
	b := stack[:0]
	for _, s := range [...]string{p.ExternalID, p.Email, p.FirstName, p.LastName, p.Department, p.Location} {
		b = append(b, s...)
		b = append(b, fieldSep...)
	}
	for i, t := range [...]time.Time{p.StartDate, p.BirthDate} {
		if !t.IsZero() {
			b = appendDate(b, t)
		}
		if i == 1 && t.IsZero() && p.BirthMonth != 0 {
			// A birthday without its year ("--MM-DD"); absent, the bytes
			// are those fingerprints always had.
			b = append(b, model.FormatMonthDay(p.BirthMonth, p.BirthDay)...)
		}
		b = append(b, fieldSep...)
	}
	return xxhash.Sum64(b)
}

// appendDate appends t as t.Format(model.DateLayout) does, without the
// cost of a general layout: four-digit years, the common case, are written
// here, and any other year goes through AppendFormat.
func appendDate(b []byte, t time.Time) []byte {
	y, m, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, model.DateLayout)
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(m)/10), byte('0'+int(m)%10), '-', byte('0'+d/10), byte('0'+d%10))
}
