package dropfolder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/sources"
)

// TestSubfolderLinksRefused: a processed/, failed/ or approve/ that is a
// symbolic link (to a folder outside the drop folder, or inside it) is
// refused with a cause naming the folder and no path of the machine; Ready
// reads nothing, Archive, Restore, Count and Archived (Approvals for
// approve/) write and read nothing through it, and the folder it points
// to stays empty.
func TestSubfolderLinksRefused(t *testing.T) {
	for _, sub := range sources.Subfolders() {
		t.Run(sub, func(t *testing.T) {
			dir := t.TempDir()
			outside := t.TempDir()
			f := newFolder(t, sources.DropFolderOptions{Dir: dir, DoneMarker: true, Pattern: "*.csv"})
			write(t, filepath.Join(dir, "people.csv"), "id\n1\n")
			write(t, filepath.Join(dir, "people.csv.done"), "")
			ready, err := f.Ready(context.Background())
			if err != nil || len(ready) != 1 {
				t.Fatalf("Ready = %v, %v", names(ready), err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, sub)); err != nil {
				t.Fatal(err)
			}
			check := func(t *testing.T, what string, err error) {
				t.Helper()
				var se *sources.SubfolderError
				if !errors.As(err, &se) || !errors.Is(err, sources.ErrSubfolder) || se.Folder != sub || !se.Link {
					t.Fatalf("%s: err = %v, want the link %s/ refused", what, err, sub)
				}
				msg := err.Error()
				if !strings.Contains(msg, "the drop folder's "+sub+"/ is a symbolic link") ||
					strings.Contains(msg, dir) || strings.Contains(msg, outside) {
					t.Errorf("%s: message %q, want the folder named and no path of the machine", what, msg)
				}
			}
			_, err = f.Ready(context.Background())
			check(t, "Ready", err)
			if sub == ApproveDir {
				write(t, filepath.Join(outside, "bait.csv"), "id\n1\n")
				_, err = f.Approvals(context.Background())
				check(t, "Approvals", err)
				if left, _ := os.ReadDir(outside); len(left) != 1 {
					t.Errorf("written through the link: %v", left)
				}
				return
			}
			_, err = f.Archive(context.Background(), ready[0], Outcome(sub), jsonReport(map[string]int{"rows": 1}))
			check(t, "Archive", err)
			exp := &exports{folder: f}
			_, err = exp.Count(context.Background())
			check(t, "Count", err)
			if sub == FailedDir {
				_, err = f.Restore(context.Background(), "failed/people.csv")
				check(t, "Restore", err)
			} else {
				_, err = exp.Archived(context.Background(), "people.csv", ready[0].SHA256)
				check(t, "Archived", err)
			}
			if left, _ := os.ReadDir(outside); len(left) != 0 {
				t.Errorf("written through the link: %v", left)
			}
			if !exists(filepath.Join(dir, "people.csv")) {
				t.Error("the export left the drop folder")
			}
		})
	}
	t.Run("a link inside the drop folder too", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "elsewhere"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("elsewhere", filepath.Join(dir, ProcessedDir)); err != nil {
			t.Fatal(err)
		}
		f := newFolder(t, sources.DropFolderOptions{Dir: dir})
		_, err := f.Ready(context.Background())
		if !errors.Is(err, sources.ErrSubfolder) {
			t.Fatalf("Ready: %v", err)
		}
	})
	t.Run("a file in place of the folder", func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, FailedDir), "")
		f := newFolder(t, sources.DropFolderOptions{Dir: dir})
		f.wait = func(context.Context, time.Duration) error { return nil }
		_, err := f.Ready(context.Background())
		var se *sources.SubfolderError
		if !errors.As(err, &se) || se.Link || !strings.Contains(err.Error(), "failed/ is not a folder") {
			t.Fatalf("Ready: %v", err)
		}
	})
}
