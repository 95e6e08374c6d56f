// Package seed fills a store with generated people, as hrsync's state would
// hold them after it created them all on the platform, and checksums a
// tenant's people so a benchmark can show that a run wrote no person row.
package seed

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"time"

	"github.com/cespare/xxhash/v2"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// DefaultBatch is the number of people saved per transaction.
const DefaultBatch = 50000

// Row is the state row of person p, created on the platform at `at`, first
// and last seen then too. Its fingerprint is the one hrsync's plan computes
// from the same person read from an export.
func Row(p model.Person, at time.Time) store.PersonRow {
	return store.PersonRow{
		ExternalID:          p.ExternalID,
		Email:               p.Email,
		FirstName:           p.FirstName,
		LastName:            p.LastName,
		Department:          p.Department,
		Location:            p.Location,
		StartDate:           p.StartDate,
		RemoteID:            "remote-" + p.ExternalID,
		Fingerprint:         int64(sources.Fingerprint(p)),
		FirstSeenAt:         at,
		LastSeenAt:          at,
		CreatedOnPlatformAt: at,
	}
}

// Seed saves people into tenant's state with store.SavePeople, batch rows
// per transaction (DefaultBatch when batch <= 0), and returns how many it
// saved.
func Seed(ctx context.Context, st *store.Store, tenant string, people iter.Seq[model.Person], batch int, at time.Time) (int, error) {
	if batch <= 0 {
		batch = DefaultBatch
	}
	rows := make([]store.PersonRow, 0, batch)
	n := 0
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		if err := st.SavePeople(ctx, tenant, rows); err != nil {
			return fmt.Errorf("seed people %d-%d: %w", n-len(rows)+1, n, err)
		}
		rows = rows[:0]
		return nil
	}
	for p := range people {
		rows = append(rows, Row(p, at))
		n++
		if len(rows) == batch {
			if err := flush(); err != nil {
				return n - batch, err
			}
		}
	}
	if err := flush(); err != nil {
		return n - len(rows), err
	}
	return n, nil
}

// Sum summarizes a tenant's people.
type Sum struct {
	// Rows counts the people, Active those not departed.
	Rows, Active int
	// Hash is an xxhash over every stored field of every person, in
	// externalId order: any written row (even one that only moves
	// last_seen_at) changes it.
	Hash uint64
}

// Checksum reads every person of tenant and sums them up.
func Checksum(ctx context.Context, st *store.Store, tenant string) (Sum, error) {
	var s Sum
	d := xxhash.New()
	var buf []byte
	err := st.ScanPeople(ctx, tenant, func(r store.PersonRow) error {
		s.Rows++
		if r.DepartedAt.IsZero() {
			s.Active++
		}
		buf = buf[:0]
		for _, f := range []string{r.ExternalID, r.Email, r.FirstName, r.LastName, r.Department, r.Location, r.RemoteID} {
			buf = append(buf, f...)
			buf = append(buf, 0x1f)
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Fingerprint))
		for _, t := range []time.Time{r.StartDate, r.FirstSeenAt, r.LastSeenAt, r.DepartedAt, r.CreatedOnPlatformAt} {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(t.UnixMicro()))
		}
		_, _ = d.Write(buf)
		return nil
	})
	if err != nil {
		return Sum{}, fmt.Errorf("checksum people: %w", err)
	}
	s.Hash = d.Sum64()
	return s, nil
}
