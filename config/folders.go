package config

import (
	"fmt"
	"strings"
)

// FolderAccess is how much of each CSV drop folder a command needs, and so
// how much LoadChecked verifies before the command starts.
type FolderAccess int

// The levels of FolderAccess.
const (
	// FoldersUnchecked checks nothing on disk: for commands that never
	// read a drop folder (validate and plan given FILE arguments read only
	// those files).
	FoldersUnchecked FolderAccess = iota
	// FoldersReadable checks that each drop folder exists, is a folder and
	// can be listed: for validate and plan reading the folder, and for
	// status, which sets the problems aside (Checks.SourcesAside).
	FoldersReadable
	// FoldersWritable also checks that files can be created in it, and that
	// processed/ and failed/ are writable folders or, when missing, can be
	// created (the first archive creates them): for run, daemon and
	// config check.
	FoldersWritable
)

// Checks are what LoadChecked verifies on the machine, beyond the file.
type Checks struct {
	// Folders is the access each CSV drop folder must give.
	Folders FolderAccess
	// Tenant limits the folder checks to the tenant of that name; "" checks
	// every tenant.
	Tenant string
	// SourcesAside keeps the problems of a tenant's source section (a
	// secret variable not set, a folder that cannot be listed, a bad key)
	// from failing the load: they are set aside in the tenant's
	// SourceProblems instead, for a command that must answer whatever
	// state the sources are in (status). The rest of the file must be good.
	SourcesAside bool
}

// setSourcesAside moves the problems of each tenant's source section from
// ps to the tenant's SourceProblems, with their lines, and leaves the rest.
func (c *Config) setSourcesAside(ps *problems) {
	kept := ps.list[:0]
	for _, p := range ps.list {
		if i, ok := sourceTenant(p.Path, len(c.Tenants)); ok {
			c.Tenants[i].SourceProblems = append(c.Tenants[i].SourceProblems, p)
			continue
		}
		kept = append(kept, p)
	}
	ps.list = kept
}

// sourceTenant returns the index of the tenant whose source section path
// names ("tenants[3].source" or a field under it), when it is one of n.
func sourceTenant(path string, n int) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(path, "tenants[%d].source", &i); err != nil || i < 0 || i >= n {
		return 0, false
	}
	rest := strings.TrimPrefix(path, fmt.Sprintf("tenants[%d].source", i))
	return i, rest == "" || strings.HasPrefix(rest, ".")
}

// checkFolders records a problem at each drop folder that does not give
// the access checks ask for.
func (c *Config) checkFolders(checks Checks, ps *problems) {
	for i, t := range c.Tenants {
		if checks.Tenant != "" && t.Name != checks.Tenant {
			continue
		}
		t.Source.checkFolder(fmt.Sprintf("tenants[%d].source", i), checks.Folders, ps)
	}
}
