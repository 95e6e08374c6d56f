// Package remotedrop keeps the drop-folder protocol (see sources.DropFolder)
// over a folder that a server holds: an SFTP server, an S3-compatible
// bucket. A backend gives it sessions with its server (Store); remotedrop
// decides which files are complete, hashes them, reads them once, and
// archives them to processed/ or failed/ with their reports (written
// through Store.WriteReport) only after
// their outcome is committed, never when they changed since they were read.
//
// Each step (listing, reading one export, archiving one export) opens its
// own session and closes it, so that a connection that drops, or a server
// that restarts, between the read and the archive costs nothing: the next
// step connects again, and an export whose step failed stays in place for
// the next run, which finds its hash committed (or not) and goes on.
package remotedrop

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Entry describes one file of the folder.
type Entry struct {
	// Name is the file's name, without folder.
	Name string
	// Size is its size in bytes.
	Size int64
	// ModTime is its modification time.
	ModTime time.Time
	// ETag is the object store's tag of the content (S3); "" where the
	// server has none (SFTP): then the content is hashed again before it
	// is archived.
	ETag string
	// By is who placed the file where the server tells it: the S3
	// object's owner, the user an SFTP session logs in as; "" when the
	// server does not say.
	By string
}

// sameVersion tells whether a and b describe the same version of a file.
func sameVersion(a, b Entry) bool {
	return a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.ETag == b.ETag
}

// Store is one session with the server holding a drop folder. Names are
// slash-separated and relative to the folder: "employees.csv",
// "processed/employees.csv".
type Store interface {
	// List returns the regular files directly in dir ("" for the folder
	// itself, "processed", "failed"); a dir that does not exist holds none.
	List(ctx context.Context, dir string) ([]Entry, error)
	// Stat describes one file; an error wrapping fs.ErrNotExist when it
	// is not there.
	Stat(ctx context.Context, name string) (Entry, error)
	// Open opens a file for reading.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// WriteReport writes a new file (a report) of the given mode where the
	// server has modes (an object store has none), creating its folder,
	// with the content write writes; an error wrapping fs.ErrExist when
	// the name is taken.
	WriteReport(ctx context.Context, name string, write func(io.Writer) error, mode fs.FileMode) error
	// Archive moves the file from, which must still be the version want,
	// to the name to without overwriting anything: an error wrapping
	// fs.ErrExist when to is taken, fs.ErrNotExist when from is gone,
	// sources.ErrChanged when from is no longer want (then from stays).
	Archive(ctx context.Context, from, to string, want Entry) error
	// Remove removes a file; an error wrapping fs.ErrNotExist when it is
	// not there.
	Remove(ctx context.Context, name string) error
	// Close ends the session.
	Close() error
}

// Dialer opens a session with the server.
type Dialer func(ctx context.Context) (Store, error)
