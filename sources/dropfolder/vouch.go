package dropfolder

import (
	"io/fs"
	"time"
)

// vouchMargin is how much older than the start of its hash a file's last
// status change must be for that change time to vouch for the content
// later (see vouchFor). File systems record times at a grain of up to two
// seconds (one second on ext4 with small inodes, two on FAT-like ones) and
// from a clock that may lag the one time.Now reads by a tick; two seconds
// covers both.
const vouchMargin = 2 * time.Second

// vouchFor returns the change time (ctime) of st when it can stand in for
// a second hash of the file: the file's status last changed at least
// vouchMargin before hashStart, the moment its hash began. Every write,
// truncation, rename onto or change of times sets the change time to the
// system's current time, and no program can set it back (unlike the
// modification time, which `touch -d` sets to anything). So when the
// change time is still this value when the file is archived, nothing has
// written to the file since before its hash began: the content archived is
// the content hashed and read. This is the reasoning of Git's index
// ("racy Git"): a time too close to the hash cannot vouch, since a write
// in the same grain of the clock would leave it unchanged. The zero time
// means the file must be hashed again.
func vouchFor(st fs.FileInfo, hashStart time.Time) time.Time {
	ct, ok := changeTime(st)
	if !ok || ct.IsZero() || !ct.Before(hashStart.Add(-vouchMargin)) {
		return time.Time{}
	}
	return ct
}

// vouches tells whether st still has the change time that vouched for the
// file's content when it was hashed.
func vouches(st fs.FileInfo, vouched time.Time) bool {
	if vouched.IsZero() {
		return false
	}
	ct, ok := changeTime(st)
	return ok && ct.Equal(vouched)
}
