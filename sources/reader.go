package sources

import (
	"context"
	"fmt"
	"io"
	"time"
)

// ContextReader is r stopping when ctx is done: each Read first checks
// ctx, so that a long copy of an export ends with its run.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx: ctx, r: r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Sleep waits for d, or until ctx is done (an error wrapping ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for files to settle: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}
