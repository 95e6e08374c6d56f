// Package baseline is the yardstick of the people sync benchmark: the
// simplest diff of two CSV exports one could write. It parses both files
// with encoding/csv, keeps a map from each previous row's key hash to an
// xxhash fingerprint of the whole row, and compares every row of the next
// file against that map. It validates nothing and touches no database, so
// it is a lower bound for what hrsync's plan does with the same files.
package baseline

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// Result counts what the diff found.
type Result struct {
	Previous  int `json:"previous"`  // data rows of the previous file
	Rows      int `json:"rows"`      // data rows of the next file
	New       int `json:"new"`       // keys the previous file did not have
	Changed   int `json:"changed"`   // keys whose row differs
	Unchanged int `json:"unchanged"` // keys whose row is the same
	Departed  int `json:"departed"`  // keys of the previous file the next one lacks
}

// checkEvery is how many rows go by between two looks at the context.
const checkEvery = 4096

// Compare diffs next against prev. Both are CSV with a header row; the
// first column is the key; a key repeated in prev keeps its last row.
func Compare(ctx context.Context, prev, next io.Reader) (Result, error) {
	var res Result
	known := make(map[uint64]uint64)
	d := xxhash.New()
	err := each(ctx, prev, d, func(key, fp uint64) {
		res.Previous++
		known[key] = fp
	})
	if err != nil {
		return Result{}, fmt.Errorf("read previous: %w", err)
	}
	err = each(ctx, next, d, func(key, fp uint64) {
		res.Rows++
		old, ok := known[key]
		switch {
		case !ok:
			res.New++
			return
		case old == fp:
			res.Unchanged++
		default:
			res.Changed++
		}
		delete(known, key)
	})
	if err != nil {
		return Result{}, fmt.Errorf("read next: %w", err)
	}
	res.Departed = len(known)
	return res, nil
}

// each calls fn with the key hash and the row fingerprint of every data
// row of r.
func each(ctx context.Context, r io.Reader, d *xxhash.Digest, fn func(key, fp uint64)) error {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	if _, err := cr.Read(); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty file: no header row")
		}
		return fmt.Errorf("read header: %w", err)
	}
	sep := []byte{0x1f}
	for n := 0; ; n++ {
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("read csv: %w", err)
			}
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read csv: %w", err)
		}
		if len(rec) == 0 {
			continue
		}
		d.Reset()
		for _, f := range rec {
			_, _ = d.WriteString(f)
			_, _ = d.Write(sep)
		}
		fn(xxhash.Sum64String(rec[0]), d.Sum64())
	}
}
