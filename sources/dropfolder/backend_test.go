package dropfolder_test

import (
	"testing"

	"hrsync/sources"
	"hrsync/sources/dropfolder"
	"hrsync/sources/dropkind"
	"hrsync/sources/droptest"
)

// TestLocalProtocol runs the protocol suite every backend passes (SFTP and
// S3 run it against their servers) against the local backend, opened through
// the source registry as cmd opens it.
func TestLocalProtocol(t *testing.T) {
	var dir string
	droptest.Run(t, droptest.Harness{
		Open: func(t *testing.T, opts sources.DropFolderOptions, csv sources.CSVOptions) sources.DropFolder {
			dir = t.TempDir()
			opts.Dir = dir
			folder, err := droptest.OpenKind(&dropfolder.Options{Common: dropkind.Common{DropFolderOptions: opts, CSVOptions: csv}}, nil)
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
