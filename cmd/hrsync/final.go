package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"hrsync/model"
)

// finalLine writes a command's last line on stderr: plain text, or, once
// the configuration asked for JSON logs, one more JSON log line, so that
// stderr stays one format from the first line to the last. It travels in
// the command's context, so that main, which prints the line, learns the
// log format the command loaded.
type finalLine struct {
	mu  sync.Mutex
	log *zap.Logger // nil until a command built its logger in JSON mode
	// printed is set once the line is written; main writes no other.
	printed bool
}

type finalLineKey struct{}

// withFinalLine returns ctx carrying f.
func withFinalLine(ctx context.Context, f *finalLine) context.Context {
	return context.WithValue(ctx, finalLineKey{}, f)
}

// finalLineOf returns the finalLine of ctx; a fresh one (plain text) when
// ctx carries none, as in tests that execute a command directly.
func finalLineOf(ctx context.Context) *finalLine {
	if f, ok := ctx.Value(finalLineKey{}).(*finalLine); ok {
		return f
	}
	return &finalLine{}
}

// useJSON makes the last line a log line of log.
func (f *finalLine) useJSON(log *zap.Logger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = log
}

// write writes msg as the last line, at a level that follows the exit code
// (info for 0 and 5, warn for 3 and 4, error for 1 and 2).
func (f *finalLine) write(w io.Writer, code int, msg string, fields ...zap.Field) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.printed = true
	if f.log == nil {
		fmt.Fprintln(w, "hrsync:", msg)
		return
	}
	level := zapcore.InfoLevel
	switch code {
	case exitFailed, exitUsage:
		level = zapcore.ErrorLevel
	case exitSafeguard, exitAttention:
		level = zapcore.WarnLevel
	}
	f.log.Log(level, msg, append(fields, zap.Int("exitCode", code))...)
	_ = f.log.Sync()
}

// done reports whether the last line was written.
func (f *finalLine) done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.printed
}

// storeError is a store that cannot be opened (unreachable, refused, a
// file that cannot be read): the command fails, and its last line says so
// as an outcome (lastWords).
type storeError struct {
	err error
	// tenants are those the command acted on, when it knew them.
	tenants []string
}

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// storeNext is the next step of a store that cannot be opened.
const storeNext = "check store.url (or HRSYNC_STORE_URL) and that the database is up and reachable"

// lastWords is the last line main writes for a command that ended in err
// without writing one, with its log fields: a store that cannot be opened
// is a failed outcome, "failed: JOB [TENANT]: CAUSE; NEXT STEP", like a
// run's; any other error is said as it is.
func lastWords(cmd *cobra.Command, err error) (string, []zap.Field) {
	var se *storeError
	if !errors.As(err, &se) {
		return err.Error(), nil
	}
	scope, tenants := "hrsync", se.tenants
	if cmd != nil {
		scope = strings.TrimPrefix(commandName(cmd), "run ")
		if t, _ := cmd.Flags().GetString("tenant"); t != "" {
			tenants = []string{t}
		}
	}
	switch n := len(tenants); {
	case n == 1:
		scope += " " + tenants[0]
	case n > 1:
		scope += fmt.Sprintf(" (%d tenants)", n)
	}
	return fmt.Sprintf("%s: %s: %s; %s", model.OutcomeFailed, scope, se.Error(), storeNext),
		[]zap.Field{zap.String("outcome", string(model.OutcomeFailed))}
}
