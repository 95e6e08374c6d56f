package apiclient

import (
	"context"

	"go.uber.org/zap"
)

// logFieldsKey is the context key of the log fields a caller attaches.
type logFieldsKey struct{}

// WithLogFields returns a context whose calls log these fields too, so that
// the client's lines carry the caller's run id. Fields must hold no personal
// data and no secret.
func WithLogFields(ctx context.Context, fields ...zap.Field) context.Context {
	prev, _ := ctx.Value(logFieldsKey{}).([]zap.Field)
	all := make([]zap.Field, 0, len(prev)+len(fields))
	all = append(append(all, prev...), fields...)
	return context.WithValue(ctx, logFieldsKey{}, all)
}

// logger is the client's logger with the fields ctx carries.
func (c *Client) logger(ctx context.Context) *zap.Logger {
	if fields, ok := ctx.Value(logFieldsKey{}).([]zap.Field); ok && len(fields) > 0 {
		return c.log.With(fields...)
	}
	return c.log
}
