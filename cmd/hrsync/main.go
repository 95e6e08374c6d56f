// Command hrsync keeps a company's people on the gifting platform in step with
// its HR system: it reads HR exports, creates people with their balances
// exactly once, personalizes collections for new hires and polls orders into
// reporting tables. Run `hrsync --help` for the commands.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	// The kinds of source register themselves (sources/registry).
	_ "hrsync/sources/dropfolder"
	_ "hrsync/sources/s3drop"
	_ "hrsync/sources/scimsrc"
	_ "hrsync/sources/sftpdrop"
	_ "hrsync/sources/sqlsrc"

	// The store dialects register themselves by DSN scheme (store.Register).
	_ "hrsync/store/postgres"
	_ "hrsync/store/sqlite"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	last := &finalLine{}
	cmd, err := newRootCmd().ExecuteContextC(withFinalLine(ctx, last))
	stop()
	code := exitCode(err)
	if err != nil && !last.done() {
		msg, fields := lastWords(cmd, err)
		last.write(os.Stderr, code, msg, fields...)
	}
	os.Exit(code)
}

// Exit codes, documented in README.md.
const (
	exitOK        = 0 // done
	exitFailed    = 1 // the run failed
	exitUsage     = 2 // usage or configuration error
	exitSafeguard = 3 // a safeguard stopped the run before any call
	exitAttention = 4 // done, but rows were rejected or grants are held
	exitLockHeld  = 5 // another run holds the lock
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode marks err with the exit code the process should end with.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}
