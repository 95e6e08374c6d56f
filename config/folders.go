package config

import "fmt"

// FolderAccess is how much of each CSV drop folder a command needs, and so
// how much LoadChecked verifies before the command starts.
type FolderAccess int

// The levels of FolderAccess.
const (
	// FoldersUnchecked checks nothing on disk: for commands that never
	// read a drop folder (status reports on the folders itself; validate
	// and plan given FILE arguments read only those files).
	FoldersUnchecked FolderAccess = iota
	// FoldersReadable checks that each drop folder exists, is a folder and
	// can be listed: for validate and plan reading the folder.
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
