// Package notify tells people about the runs that need them, over a
// webhook (generic JSON, Slack- or Microsoft Teams-compatible) and e-mail
// over SMTP. A message carries the outcome, its cause and next step,
// counts, file names, rejected rows (line, column and a reason that quotes
// values masked) and externalIds: never an e-mail address or a birth date.
// A delivery is retried with backoff; one that cannot be made is logged and
// counted, and never changes the run's outcome.
package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sethvargo/go-retry"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Event is what a message says about one cycle of a job for a tenant.
type Event struct {
	Job     string         `json:"job"`
	Tenant  string         `json:"tenant"`
	Outcome string         `json:"outcome"`
	Cause   string         `json:"cause"`
	Next    string         `json:"next,omitempty"`
	Counts  map[string]int `json:"counts"`
	// Files are the exports the cycle read, with where they went.
	Files []File `json:"files,omitempty"`
	// Stops are the safeguards that stopped a run.
	Stops []string `json:"safeguards,omitempty"`
	// Rejections are the first MaxRejections rejected rows; MoreRejections
	// counts the others.
	Rejections     []Rejection `json:"rejections,omitempty"`
	MoreRejections int         `json:"moreRejections,omitempty"`
	// Held are the externalIds of the people whose grant waits for
	// confirmation (the first MaxHeld; MoreHeld counts the others).
	Held     []string  `json:"heldGrants,omitempty"`
	MoreHeld int       `json:"moreHeldGrants,omitempty"`
	At       time.Time `json:"at"`
}

// File is one export of a cycle.
type File struct {
	Name       string   `json:"name"`
	Outcome    string   `json:"outcome"`
	ArchivedAs string   `json:"archivedAs,omitempty"`
	Reports    []string `json:"reports,omitempty"`
}

// Rejection is one rejected row: its file, line, column and masked reason.
type Rejection struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column string `json:"column,omitempty"`
	Reason string `json:"reason"`
}

// Bounds of the lists a message carries.
const (
	MaxRejections = 20
	MaxHeld       = 50
)

// Channel delivers a message one way.
type Channel interface {
	// Name is the channel's label in logs and metrics: "webhook", "slack",
	// "teams" or "email".
	Name() string
	// Send delivers the event once. An error wrapping ErrPermanent is not
	// retried.
	Send(ctx context.Context, e Event) error
}

// ErrPermanent marks a delivery error that another try would not fix (the
// endpoint refused the message).
var ErrPermanent = errors.New("refused")

// Counter counts deliveries by tenant and channel; *metrics.Metrics is one.
type Counter interface {
	Notified(tenant, channel string, sent bool)
}

// Options configure a Notifier.
type Options struct {
	// Attempts bounds the tries of one delivery (default 4), Backoff is the
	// wait before the second (doubling; default 2s), Timeout bounds one try
	// (default 10s).
	Attempts int
	Backoff  time.Duration
	Timeout  time.Duration
	// Counter, when not nil, counts the deliveries.
	Counter Counter
	// Logger logs each failed try and each delivery given up.
	Logger *zap.Logger
}

// Notifier sends events to the channels of their tenant.
type Notifier struct {
	opts     Options
	log      *zap.Logger
	channels map[string][]Channel
}

// New returns a notifier with no channel.
func New(opts Options) *Notifier {
	if opts.Attempts < 1 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Notifier{opts: opts, log: log, channels: map[string][]Channel{}}
}

// Add gives a tenant a channel.
func (n *Notifier) Add(tenant string, c Channel) {
	n.channels[tenant] = append(n.channels[tenant], c)
}

// Channels names the tenant's channels, in the order they were added.
func (n *Notifier) Channels(tenant string) []string {
	names := make([]string, 0, len(n.channels[tenant]))
	for _, c := range n.channels[tenant] {
		names = append(names, c.Name())
	}
	return names
}

// Has tells whether the tenant has a channel.
func (n *Notifier) Has(tenant string) bool { return len(n.channels[tenant]) > 0 }

// Send delivers e on every channel of its tenant at once, each retried with
// exponential backoff, and waits for them. A delivery given up is logged
// and counted; Send returns how many were. Once ctx is cancelled (a daemon
// shutting down) it still tells about the run, but tries each channel once,
// so that the shutdown's grace is not spent on retries.
func (n *Notifier) Send(ctx context.Context, e Event) (failed int) {
	attempts := n.opts.Attempts
	if ctx.Err() != nil {
		attempts = 1
	}
	ctx = context.WithoutCancel(ctx)
	chans := n.channels[e.Tenant]
	results := make([]error, len(chans))
	var g errgroup.Group
	for i, c := range chans {
		g.Go(func() error {
			results[i] = n.deliver(ctx, c, e, attempts)
			return nil
		})
	}
	_ = g.Wait() // each result is in results
	for i, err := range results {
		c := chans[i]
		if n.opts.Counter != nil {
			n.opts.Counter.Notified(e.Tenant, c.Name(), err == nil)
		}
		if err != nil {
			failed++
			n.log.Error("notification not delivered; the run's outcome stands", zap.String("tenant", e.Tenant),
				zap.String("job", e.Job), zap.String("channel", c.Name()), zap.Error(err))
		}
	}
	return failed
}

// deliver sends e on c, trying again with backoff.
func (n *Notifier) deliver(ctx context.Context, c Channel, e Event, attempts int) error {
	backoff := retry.WithMaxRetries(uint64(attempts-1), retry.NewExponential(n.opts.Backoff))
	try := 0
	err := retry.Do(ctx, backoff, func(ctx context.Context) error {
		try++
		tctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
		defer cancel()
		err := c.Send(tctx, e)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrPermanent):
			return err
		}
		n.log.Warn("notification try failed; trying again", zap.String("tenant", e.Tenant), zap.String("channel", c.Name()),
			zap.Int("try", try), zap.Error(err))
		return retry.RetryableError(err)
	})
	if err != nil {
		return fmt.Errorf("%s after %d %s: %w", c.Name(), try, map[bool]string{true: "try", false: "tries"}[try == 1], err)
	}
	return nil
}
