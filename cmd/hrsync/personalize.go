package main

import (
	"context"
	"fmt"

	"hrsync/config"
	"hrsync/sources"
	"hrsync/sources/sqlsrc"
	"hrsync/store"
	"hrsync/sync/personalize"
)

// lastExport finds a tenant's last good export: for a drop folder, the
// newest file the store records as processed, found in processed/ by its
// content hash; for a SQL source, the query itself.
func (a *app) lastExport(t config.Tenant, st *store.Store) personalize.LastExport {
	return func(ctx context.Context) (sources.Source, bool, error) {
		if t.Source.SQL != nil {
			src, err := sqlsrc.Open(ctx, t.Name, t.Source.SQL.SQLOptions)
			if err != nil {
				return nil, false, fmt.Errorf("tenant %s: %w", t.Name, err)
			}
			return &queryExport{Source: src}, true, nil
		}
		if t.Source.CSV == nil {
			return nil, false, fmt.Errorf("tenant %s has no source", t.Name)
		}
		rec, ok, err := st.LastProcessedFile(ctx, t.Name)
		if err != nil || !ok {
			return nil, false, err
		}
		folder, err := a.dropFolder(ctx, t)
		if err != nil {
			return nil, false, err
		}
		src, err := folder.Archived(ctx, rec.Name, rec.SHA256)
		if err != nil {
			return nil, false, err
		}
		return src, true, nil
	}
}
