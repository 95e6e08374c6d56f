package main

import (
	"context"
	"fmt"

	"hrsync/config"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/personalize"
)

// lastExport finds a tenant's last good export, as its kind of source
// keeps it (for a drop folder, the newest file the store records as
// processed; for a SQL source, the query itself).
func (a *app) lastExport(t config.Tenant, st *store.Store) personalize.LastExport {
	last := func(ctx context.Context) (string, string, bool, error) {
		rec, ok, err := st.LastProcessedFile(ctx, t.Name)
		return rec.Name, rec.SHA256, ok, err
	}
	return func(ctx context.Context) (sources.Source, bool, error) {
		src, err := a.openSource(ctx, t, st)
		if err != nil {
			return nil, false, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		return src.LastExport(ctx, last)
	}
}
