package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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
