package config

import "net"

// scimSection is the section of a tenant's source that the SCIM endpoint
// feeds (the source kind "scim").
const scimSection = "scim"

// SCIMTenants lists the tenants whose source is scim: those the SCIM
// endpoint serves, each selected by its own token.
func (c *Config) SCIMTenants() []Tenant {
	var out []Tenant
	for _, t := range c.Tenants {
		if t.Source.Section == scimSection {
			out = append(out, t)
		}
	}
	return out
}

// validateSCIM checks the SCIM endpoint's listen address and settle delay,
// and that the endpoint has a tenant to serve when it is on.
func (c *Config) validateSCIM(ps *problems) {
	s := &c.SCIM
	if s.Listen != "" {
		_, port, err := net.SplitHostPort(s.Listen)
		switch {
		case err != nil || port == "":
			ps.addf("scim.listen", "must be host:port or :port, such as :8090")
		case s.Listen == c.HTTP.Listen && port != "0":
			ps.addf("scim.listen", "is also http.listen: the SCIM endpoint needs a port of its own, so that it can be exposed without /metrics")
		case len(c.SCIMTenants()) == 0:
			ps.addf("scim.listen", "is set but no tenant's source is scim: add a tenant with source.scim, or leave scim.listen empty")
		}
	}
	positiveDuration(ps, "scim.settle", s.Settle)
}
