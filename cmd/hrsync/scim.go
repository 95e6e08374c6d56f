package main

// The SCIM endpoint of `hrsync daemon` (scim.listen): the tenants fed by
// SCIM, each selected by its token, over the store's SCIM directory; each
// write a tenant's identity provider makes triggers that tenant's people
// job, scim.settle after the last one.

import (
	"fmt"
	"io"
	"net"

	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/daemon"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources/scim"
	"hrsync/sources/scimsrc"
	"hrsync/store"
)

// scimEndpoint is what the daemon needs to serve SCIM: its server and the
// people jobs the writes trigger. The zero value serves nothing.
type scimEndpoint struct {
	servers   []daemon.Server
	triggered []runner.Key
}

// newSCIMEndpoint returns the SCIM endpoint of tenants (those of them
// whose source is scim and whose people job this build runs) on
// scim.listen, or nothing when scim.listen is empty. trigger is told the
// tenant of every write; out hears where the endpoint listens.
func (a *app) newSCIMEndpoint(tenants []config.Tenant, st *store.Store, reg *runner.Registry, out io.Writer, trigger func(runner.Key)) (scimEndpoint, error) {
	var ep scimEndpoint
	tokens := map[string]scim.TokenSource{}
	for _, t := range tenants {
		tok, ok := scimsrc.TokenOf(t.Source.Options)
		if !ok {
			continue
		}
		if a.cfg.SCIM.Listen == "" {
			a.log.Warn("tenant fed by SCIM, but scim.listen is empty: this daemon serves no SCIM endpoint, and the tenant's people are those already in its directory",
				zap.String("tenant", t.Name))
			continue
		}
		k := runner.Key{Job: model.JobPeople, Tenant: t.Name}
		if _, ok := reg.Lookup(k); !ok {
			continue
		}
		tokens[t.Name] = tok
		ep.triggered = append(ep.triggered, k)
	}
	if len(tokens) == 0 {
		return ep, nil
	}
	h, err := scim.New(scim.Options{
		Directory: st.SCIMDirectory(),
		Tenants:   tokens,
		Logger:    a.log.Named("scim"),
		OnWrite:   func(tenant string) { trigger(runner.Key{Job: model.JobPeople, Tenant: tenant}) },
	})
	if err != nil {
		return ep, fmt.Errorf("scim endpoint: %w", err)
	}
	ep.servers = []daemon.Server{{
		Name: "scim", Listen: a.cfg.SCIM.Listen, Handler: h,
		OnListen: func(addr net.Addr) {
			fmt.Fprintf(out, "scim endpoint listening on http://%s/scim/v2 (%d tenant(s); people jobs %s after the last write)\n",
				addr, len(tokens), a.cfg.SCIM.Settle)
		},
	}}
	return ep, nil
}
