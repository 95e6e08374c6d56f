package runner

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Progress prints how far a long run has got. At a terminal it redraws one
// line in place, at most every tenth of a second; elsewhere (a log file, a
// pod's output) it writes a line at most every Every: a log line when it
// was made with a logger (NewLogProgress), so that a stream of JSON logs
// stays JSON. Its methods are safe for concurrent use and never wait.
type Progress struct {
	w        io.Writer
	log      *zap.Logger
	terminal bool
	every    time.Duration
	now      func() time.Time

	mu    sync.Mutex
	last  time.Time
	drawn bool // a terminal line is on screen without its newline
}

// DefaultProgressEvery is how often Progress prints a line when its
// writer is not a terminal.
const DefaultProgressEvery = 5 * time.Second

// NewProgress returns a Progress writing to w; every <= 0 means
// DefaultProgressEvery.
func NewProgress(w io.Writer, terminal bool, every time.Duration) *Progress {
	if every <= 0 {
		every = DefaultProgressEvery
	}
	if terminal {
		every = 100 * time.Millisecond
	}
	return &Progress{w: w, terminal: terminal, every: every, now: time.Now}
}

// NewLogProgress returns a Progress that writes a log line at most every
// every (<= 0 means DefaultProgressEvery), for a process whose stderr is not
// a terminal.
func NewLogProgress(log *zap.Logger, every time.Duration) *Progress {
	if every <= 0 {
		every = DefaultProgressEvery
	}
	return &Progress{log: log, every: every, now: time.Now}
}

// NewStderrProgress returns the Progress of a run started by hand: one
// line redrawn in place on stderr when it is a terminal, else log lines.
func NewStderrProgress(stderr io.Writer, log *zap.Logger) *Progress {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return NewProgress(stderr, true, 0)
	}
	return NewLogProgress(log, 0)
}

// Report says that done of total items of what label names are handled.
// The last step (done == total) is always printed.
func (p *Progress) Report(label string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if done < total && !p.last.IsZero() && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	if p.log != nil {
		p.log.Info("progress", zap.String("of", label), zap.Int("done", done), zap.Int("total", total),
			zap.Float64("percent", math.Round(pct)))
		return
	}
	line := fmt.Sprintf("%s: %d/%d (%.0f%%)", label, done, total, pct)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = done < total
		if !p.drawn {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, line)
}

// Func returns a callback for a job's progress hook that reports under
// label.
func (p *Progress) Func(label string) func(done, total int) {
	return func(done, total int) { p.Report(label, done, total) }
}

// End ends a line a terminal redraw left open, so that later output starts
// on a line of its own.
func (p *Progress) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	p.last = time.Time{}
}
