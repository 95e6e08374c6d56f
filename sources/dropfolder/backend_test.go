package dropfolder_test

import (
	"context"
	"testing"

	"hrsync/sources"
	_ "hrsync/sources/dropfolder" // the backend under test
	"hrsync/sources/droptest"
)

// TestLocalProtocol runs the protocol suite every backend passes (SFTP and
// S3 run it against their servers) against the local backend, opened by
// its type as cmd opens it.
func TestLocalProtocol(t *testing.T) {
	var dir string
	droptest.Run(t, droptest.Harness{
		Open: func(t *testing.T, opts sources.DropFolderOptions, csv sources.CSVOptions) sources.DropFolder {
			dir = t.TempDir()
			opts.Dir = dir
			folder, err := sources.OpenDropFolder(context.Background(), sources.DropConfig{Folder: opts, CSV: csv})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return folder
		},
		Put:     func(t *testing.T, name string, content []byte) { droptest.PutFile(t, dir, name, content) },
		Get:     func(t *testing.T, name string) ([]byte, bool) { return droptest.GetFile(t, dir, name) },
		Restart: func(*testing.T) {}, // no server: nothing to restart
	})
}
