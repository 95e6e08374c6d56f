package config

import (
	"testing"

	"hrsync/sources/dropfolder"
	"hrsync/sources/registry"
	_ "hrsync/sources/s3drop"  // registers the s3 kind, as in cmd/hrsync
	_ "hrsync/sources/scimsrc" // registers the scim kind, as in cmd/hrsync
	"hrsync/sources/sftpdrop"
	"hrsync/sources/sqlsrc"
	"hrsync/store"
	_ "hrsync/store/postgres" // registers the postgres dialect, as in cmd/hrsync
	_ "hrsync/store/sqlite"   // registers the sqlite dialect, as in cmd/hrsync
)

// testKinds reads the tenants' sources with the program's registry: the
// kinds register themselves by being imported, as in cmd/hrsync.
var testKinds SourceKinds = registry.Kinds{}

// optionsOf returns the options of tn's source as the kind's own type.
func optionsOf[T any](t *testing.T, tn Tenant) T {
	t.Helper()
	o, ok := tn.Source.Options.(T)
	if !ok {
		var want T
		t.Fatalf("tenant %s: source options are %T, want %T", tn.Name, tn.Source.Options, want)
	}
	return o
}

// csvOf returns the options of a tenant's local drop folder.
func csvOf(t *testing.T, tn Tenant) *dropfolder.Options {
	t.Helper()
	return optionsOf[*dropfolder.Options](t, tn)
}

// sftpOf returns the options of a tenant's SFTP drop folder.
func sftpOf(t *testing.T, tn Tenant) *sftpdrop.Options {
	t.Helper()
	return optionsOf[*sftpdrop.Options](t, tn)
}

// sqlOf returns the options of a tenant's SQL source.
func sqlOf(t *testing.T, tn Tenant) *sqlsrc.Options {
	t.Helper()
	return optionsOf[*sqlsrc.Options](t, tn)
}

// testDialects checks and describes the store URL with the store's driver
// registry: the dialects register themselves by being imported, as in
// cmd/hrsync.
var testDialects StoreDialects = store.Dialects{}
