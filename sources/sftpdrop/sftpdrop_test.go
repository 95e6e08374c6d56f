package sftpdrop_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/internal/testservers"
	"hrsync/sources"
	"hrsync/sources/dropkind"
	"hrsync/sources/droptest"
	"hrsync/sources/sftpdrop"
)

// TestSFTPProtocol runs the protocol suite against OpenSSH's sshd serving
// a temporary folder (this machine's disk, so the test can look at it).
func TestSFTPProtocol(t *testing.T) {
	srv := testservers.StartSSHD(t)
	var dir string
	droptest.Run(t, droptest.Harness{
		Open: func(t *testing.T, opts sources.DropFolderOptions, csv sources.CSVOptions) sources.DropFolder {
			dir = t.TempDir()
			folder, err := droptest.OpenKind(&sftpdrop.Options{Common: dropkind.Common{DropFolderOptions: opts, CSVOptions: csv}, SFTP: options(srv, dir)}, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return folder
		},
		Put: func(t *testing.T, name string, content []byte) { droptest.PutFile(t, dir, name, content) },
		Get: func(t *testing.T, name string) ([]byte, bool) { return droptest.GetFile(t, dir, name) },
		Restart: func(t *testing.T) {
			srv.Stop()
			srv.Start(t)
		},
	})
}

// TestSFTPReportMode: the reports are written with reports.mode (0640 here,
// so that an HR group can read them), whatever the server's umask.
func TestSFTPReportMode(t *testing.T) {
	srv := testservers.StartSSHD(t)
	dir := t.TempDir()
	opts := &sftpdrop.Options{
		Common: dropkind.Common{DropFolderOptions: sources.DropFolderOptions{StableFor: time.Millisecond, ReportMode: 0o640}, CSVOptions: droptest.CSV()},
		SFTP:   options(srv, dir),
	}
	folder, err := droptest.OpenKind(opts, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "employees.csv"), droptest.Export(1, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := folder.Ready(context.Background())
	if err != nil || len(got) != 1 {
		t.Fatalf("Ready: %d %v", len(got), err)
	}
	if _, err := got[0].Archive(true, droptest.Reports(`{}`)); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	for _, suffix := range []string{sources.ReportSuffix, sources.HTMLReportSuffix, sources.RejectsSuffix} {
		fi, err := os.Stat(filepath.Join(dir, "processed", "employees.csv"+suffix))
		if err != nil {
			t.Fatalf("report %s: %v", suffix, err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("report %s: mode %v, want 0640", suffix, fi.Mode().Perm())
		}
	}
}

func options(srv *testservers.SSHD, dir string) *sftpdrop.SFTPOptions {
	return &sftpdrop.SFTPOptions{
		Host: srv.Host, Port: srv.Port, User: srv.User, Dir: dir,
		PrivateKeyFile: srv.PrivateKeyFile, KnownHostsFile: srv.KnownHostsFile,
	}
}

// TestSFTPHostKey: a server whose host key is not the one in known_hosts is
// refused before anything is read; turning the check off is logged at warn.
func TestSFTPHostKey(t *testing.T) {
	srv := testservers.StartSSHD(t)
	dir := t.TempDir()
	opts := &sftpdrop.Options{Common: dropkind.Common{CSVOptions: droptest.CSV()}, SFTP: options(srv, dir)}
	opts.SFTP.KnownHostsFile = srv.OtherKnownHostsFile
	folder, err := droptest.OpenKind(opts, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	_, err = folder.Ready(context.Background())
	if err == nil || !strings.Contains(err.Error(), "key mismatch") {
		t.Fatalf("Ready against a server of another host key: %v, want a key mismatch", err)
	}

	opts.SFTP.KnownHostsFile = ""
	opts.SFTP.InsecureIgnoreHostKey = true
	var warned []string
	folder, err = droptest.OpenKind(opts, func(msg string) { warned = append(warned, msg) })
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := folder.Ready(context.Background()); err != nil {
		t.Fatalf("Ready without host key check: %v", err)
	}
	if len(warned) == 0 || !strings.Contains(warned[0], "NOT checked") {
		t.Errorf("warnings %q: want the unchecked host key said", warned)
	}
}

// TestSFTPSubfolderLinksRefused: through OpenSSH's sshd, a processed/,
// failed/ or approve/ that is a symbolic link (to a folder outside the
// drop folder) is refused by Ready, before any export is read, and by
// Archive (Approvals for approve/) when it became one after the read, with
// a cause naming the folder and no path; nothing is written where the link
// points, and the export stays.
func TestSFTPSubfolderLinksRefused(t *testing.T) {
	srv := testservers.StartSSHD(t)
	for _, sub := range sources.Subfolders() {
		t.Run(sub, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			opts := &sftpdrop.Options{
				Common: dropkind.Common{DropFolderOptions: sources.DropFolderOptions{StableFor: time.Millisecond}, CSVOptions: droptest.CSV()},
				SFTP:   options(srv, dir),
			}
			folder, err := droptest.OpenKind(opts, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			droptest.PutFile(t, dir, "employees.csv", droptest.Export(1, 1))
			got, err := folder.Ready(context.Background())
			if err != nil || len(got) != 1 {
				t.Fatalf("Ready: %d %v", len(got), err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, sub)); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, sources.ErrSubfolder) || !strings.Contains(err.Error(), "the drop folder's "+sub+"/ is a symbolic link") ||
					strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), outside) {
					t.Errorf("%s: %v, want %s/ refused as a link, no path", what, err, sub)
				}
			}
			_, err = folder.Ready(context.Background())
			check("Ready", err)
			if sub == sources.ApproveDir {
				_, err = folder.Approvals(context.Background())
				check("Approvals", err)
			} else {
				_, err = got[0].Archive(sub == sources.ProcessedDir, droptest.Reports(`{}`))
				check("Archive", err)
				if _, err := folder.Count(context.Background()); !errors.Is(err, sources.ErrSubfolder) {
					t.Errorf("Count: %v", err)
				}
			}
			if left, _ := os.ReadDir(outside); len(left) != 0 {
				t.Errorf("written through the link: %v", left)
			}
			if _, ok := droptest.GetFile(t, dir, "employees.csv"); !ok {
				t.Error("the export left the drop folder")
			}
		})
	}
}
