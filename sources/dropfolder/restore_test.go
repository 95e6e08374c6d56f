package dropfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/sources"
)

// failedFolder is a drop folder with one export, people.csv, archived in
// failed/ with its report, as a safeguard stop leaves it.
func failedFolder(t *testing.T, opts sources.DropFolderOptions) (*Folder, string) {
	t.Helper()
	dir := t.TempDir()
	opts.Dir = dir
	f := newFolder(t, opts)
	f.wait = func(context.Context, time.Duration) error { return nil }
	f.now = func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	write(t, filepath.Join(dir, "people.csv"), "stopped")
	if opts.DoneMarker {
		write(t, filepath.Join(dir, "people.csv"+MarkerSuffix), "")
	}
	ready, err := f.Ready(context.Background())
	if err != nil || len(ready) != 1 {
		t.Fatalf("Ready = %v, %v", names(ready), err)
	}
	if _, err := f.Archive(context.Background(), ready[0], Failed, jsonReport(map[string]string{"outcome": "safeguard"})); err != nil {
		t.Fatal(err)
	}
	return f, dir
}

func sum(content string) string {
	s := sha256.Sum256([]byte(content))
	return hex.EncodeToString(s[:])
}

func TestFailedExportRefuses(t *testing.T) {
	f, dir := failedFolder(t, sources.DropFolderOptions{})
	write(t, filepath.Join(dir, "waiting.csv"), "waiting")
	write(t, filepath.Join(dir, "processed-elsewhere.csv"), "x")
	if err := os.Mkdir(filepath.Join(dir, "failed", "sub.csv"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "waiting.csv"), filepath.Join(dir, "failed", "link.csv")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, rel, says string
	}{
		{"empty", "", "names no file"},
		{"a file waiting in the folder itself", "waiting.csv", "is not in the drop folder's failed/ (give it as failed/NAME"},
		{"a file in processed/", "processed/people.csv", "is not in the drop folder's failed/ (give it as failed/NAME"},
		{"a nested path", "failed/sub/people.csv", "is not in the drop folder's failed/ (give it as failed/NAME"},
		{"escaping with ..", "failed/../../etc/passwd", "is outside the drop folder"},
		{"escaping to the parent", "..", "is outside the drop folder"},
		{"an absolute path elsewhere", "/etc/passwd", "is outside the drop folder"},
		{"the failed folder itself", "failed", "is not in the drop folder's failed/ (give it as failed/NAME"},
		{"a report", "failed/people.csv.report.json", "not an export"},
		{"a missing file", "failed/nobody.csv", "no such file"},
		{"a directory", "failed/sub.csv", "not a regular file"},
		{"a symbolic link", "failed/link.csv", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.FailedExport(tt.rel)
			if !errors.Is(err, ErrNotFailedExport) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("FailedExport(%q) = %v; want ErrNotFailedExport saying %q", tt.rel, err, tt.says)
			}
			if _, err := f.Restore(context.Background(), tt.rel); !errors.Is(err, ErrNotFailedExport) {
				t.Errorf("Restore(%q) = %v; want ErrNotFailedExport", tt.rel, err)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "waiting.csv")); err != nil || string(b) != "waiting" {
		t.Errorf("the waiting file changed: %q, %v", b, err)
	}
}

func TestFailedExportAccepts(t *testing.T) {
	f, dir := failedFolder(t, sources.DropFolderOptions{})
	for _, rel := range []string{"failed/people.csv", "./failed/people.csv", "failed/../failed/people.csv", filepath.Join(dir, "failed", "people.csv")} {
		name, err := f.FailedExport(rel)
		if err != nil || name != "people.csv" {
			t.Errorf("FailedExport(%q) = %q, %v; want people.csv", rel, name, err)
		}
	}
}

func TestRestore(t *testing.T) {
	t.Run("back under its own name, report left in failed/", func(t *testing.T) {
		f, dir := failedFolder(t, sources.DropFolderOptions{})
		got, err := f.Restore(context.Background(), "failed/people.csv")
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "people.csv" || got.Path != filepath.Join(dir, "people.csv") || got.SHA256 != sum("stopped") || got.Size != 7 {
			t.Errorf("Restore = %+v", got)
		}
		if exists(filepath.Join(dir, "failed", "people.csv")) {
			t.Error("the export is still in failed/")
		}
		if !exists(filepath.Join(dir, "failed", "people.csv"+ReportSuffix)) {
			t.Error("the report of the stopped run left failed/")
		}
		_, err = f.Restore(context.Background(), "failed/people.csv")
		if !errors.Is(err, ErrNotFailedExport) || !strings.Contains(err.Error(), "no longer in failed/") {
			t.Errorf("a second Restore = %v; want it to say the file is no longer in failed/", err)
		}
	})
	t.Run("a file of the same name waiting is not overwritten", func(t *testing.T) {
		f, dir := failedFolder(t, sources.DropFolderOptions{})
		write(t, filepath.Join(dir, "people.csv"), "newer export")
		got, err := f.Restore(context.Background(), "failed/people.csv")
		if err != nil {
			t.Fatal(err)
		}
		want := "people.20250601T120000Z-" + sum("stopped")[:8] + ".csv"
		if got.Name != want {
			t.Errorf("restored as %s, want %s", got.Name, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "people.csv")); string(b) != "newer export" {
			t.Errorf("the waiting file was overwritten: %q", b)
		}
		if b, _ := os.ReadFile(got.Path); string(b) != "stopped" {
			t.Errorf("restored content = %q", b)
		}
	})
	t.Run("with done markers the restored export gets one", func(t *testing.T) {
		f, _ := failedFolder(t, sources.DropFolderOptions{DoneMarker: true})
		got, err := f.Restore(context.Background(), "failed/people.csv")
		if err != nil {
			t.Fatal(err)
		}
		if !exists(got.Path + MarkerSuffix) {
			t.Error("no marker beside the restored export")
		}
		ready, err := f.Ready(context.Background())
		if err != nil || len(ready) != 1 || ready[0].Name != "people.csv" {
			t.Errorf("Ready after Restore = %v, %v; want the restored export", names(ready), err)
		}
	})
	t.Run("archived again, the first report stays", func(t *testing.T) {
		f, dir := failedFolder(t, sources.DropFolderOptions{})
		got, err := f.Restore(context.Background(), "failed/people.csv")
		if err != nil {
			t.Fatal(err)
		}
		dest, err := f.Archive(context.Background(), got, Failed, jsonReport(map[string]string{"outcome": "failed"}))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(dest) == "people.csv" {
			t.Errorf("archived again as %s, over the first report's name", dest)
		}
		b, err := os.ReadFile(filepath.Join(dir, "failed", "people.csv"+ReportSuffix))
		if err != nil || !strings.Contains(string(b), "safeguard") {
			t.Errorf("first report = %q, %v", b, err)
		}
	})
}

func TestRel(t *testing.T) {
	f, dir := failedFolder(t, sources.DropFolderOptions{})
	tests := map[string]string{
		filepath.Join(dir, "failed", "people.csv"):   "failed/people.csv",
		filepath.Join(dir, "processed", "a b.csv"):   "processed/a b.csv",
		filepath.Join(filepath.Dir(dir), "else.csv"): filepath.Join(filepath.Dir(dir), "else.csv"),
	}
	for in, want := range tests {
		if got := f.Rel(in); got != want {
			t.Errorf("Rel(%s) = %s, want %s", in, got, want)
		}
	}
}
