// Package shard splits a fleet's tenants over the one-shot runs of several
// CronJobs: `hrsync run --shard i/n` runs the tenants of shard i of n.
//
// A tenant's shard depends only on its name and n (rendezvous hashing: the
// shard whose hash of the name and the shard's number is highest), so that
// every run agrees without talking to the others; adding or removing a
// tenant moves no other tenant, and going from n to n+1 shards moves only
// the tenants that the new shard takes (about one in n+1).
package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Shard is shard Index of Count (1 ≤ Index ≤ Count); the zero value is no
// sharding: every tenant.
type Shard struct {
	Index int
	Count int
}

// MaxCount bounds the number of shards.
const MaxCount = 1000

// Parse reads "i/n", 1 ≤ i ≤ n ≤ MaxCount; "" is no sharding.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 1/3 for the first of three shards", s)
	}
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case ierr != nil || nerr != nil:
		return Shard{}, fmt.Errorf("shard %q: i and n must be whole numbers, e.g. 1/3", s)
	case n < 1 || n > MaxCount:
		return Shard{}, fmt.Errorf("shard %q: the number of shards must be 1 to %d", s, MaxCount)
	case i < 1 || i > n:
		return Shard{}, fmt.Errorf("shard %q: the shard must be 1 to %d (shards are numbered from 1)", s, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// Enabled tells whether s selects a part of the tenants.
func (s Shard) Enabled() bool { return s.Count > 0 }

// String renders s as "i/n" ("" when not sharding).
func (s Shard) String() string {
	if !s.Enabled() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Of returns the shard (1 to n) that tenant belongs to among n shards.
func Of(tenant string, n int) (int, error) {
	if n < 1 || n > MaxCount {
		return 0, errors.New("shard: the number of shards must be 1 to " + strconv.Itoa(MaxCount))
	}
	best, bestScore := 0, uint64(0)
	for j := 1; j <= n; j++ {
		score := xxhash.Sum64String(strconv.Itoa(j) + "\x00" + tenant)
		if j == 1 || score > bestScore {
			best, bestScore = j, score
		}
	}
	return best, nil
}

// Owns tells whether tenant belongs to s; every tenant belongs to the zero
// Shard.
func (s Shard) Owns(tenant string) bool {
	if !s.Enabled() {
		return true
	}
	i, err := Of(tenant, s.Count)
	return err == nil && i == s.Index
}
