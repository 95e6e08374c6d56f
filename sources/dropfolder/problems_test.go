package dropfolder

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hrsync/sources"
)

// readyNow is Ready without the stability wait.
func readyNow(t *testing.T, f *Folder) []File {
	t.Helper()
	f.wait = func(context.Context, time.Duration) error { return nil }
	files, err := f.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return files
}

// byName indexes files by name.
func byName(files []File) map[string]File {
	out := map[string]File{}
	for _, f := range files {
		out[f.Name] = f
	}
	return out
}

// TestReadyProblems: a file that cannot be read, an empty file, a link (in
// or out of the folder) and a named pipe come back with their Problem
// beside the good file, instead of stopping Ready. The tests run as root,
// whom mode 000 does not stop: the unreadable files are made so by the
// folder's open function (permission denied at open, an I/O error while
// reading).
func TestReadyProblems(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.csv"), "externalId\nX1\n")
	write(t, filepath.Join(dir, "good.csv"), "externalId\nP1\n")
	write(t, filepath.Join(dir, "denied.csv"), "externalId\nP2\n")
	write(t, filepath.Join(dir, "broken.csv"), "externalId\nP3\n")
	write(t, filepath.Join(dir, "empty.csv"), "")
	if err := os.Symlink(filepath.Join(outside, "secret.csv"), filepath.Join(dir, "out.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("good.csv", filepath.Join(dir, "in.csv")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.csv"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	f.open = func(root *os.Root, name string) (*os.File, error) {
		switch name {
		case "denied.csv":
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: syscall.EACCES}
		case "broken.csv":
			// A descriptor whose reads fail: a directory's.
			return root.Open(".")
		}
		return openInRoot(root, name)
	}
	files := byName(readyNow(t, f))
	if len(files) != 7 {
		t.Fatalf("Ready = %v, want good, denied, broken, empty, out, in and pipe (no folder)", names(readyNow(t, f)))
	}
	if g := files["good.csv"]; g.Problem != nil || g.SHA256 == "" {
		t.Errorf("good.csv: problem %v, hash %q; want none and a hash", g.Problem, g.SHA256)
	}
	want := map[string]string{
		"denied.csv": "denied.csv cannot be read (permission denied)",
		"broken.csv": "broken.csv cannot be read (",
		"empty.csv":  "empty.csv is empty (0 bytes)",
		"out.csv":    "out.csv is a symbolic link: hrsync never follows a link",
		"in.csv":     "in.csv is a symbolic link",
		"pipe.csv":   "pipe.csv is a named pipe, not a file hrsync can read",
	}
	for name, prefix := range want {
		file := files[name]
		var pe *ProblemError
		if !errors.As(file.Problem, &pe) {
			t.Errorf("%s: problem %v, want a *ProblemError", name, file.Problem)
			continue
		}
		if !strings.HasPrefix(pe.Error(), prefix) {
			t.Errorf("%s: problem %q, want it to start with %q", name, pe.Error(), prefix)
		}
		if strings.Contains(pe.Error(), dir) {
			t.Errorf("%s: problem %q names the folder's path", name, pe.Error())
		}
		if file.SHA256 != "" {
			t.Errorf("%s: hash %q, want none", name, file.SHA256)
		}
	}
	t.Run("each goes to failed/ with its report", func(t *testing.T) {
		for name := range want {
			dest, err := f.Archive(t.Context(), files[name], Failed, jsonReport(map[string]string{"error": files[name].Problem.Error()}))
			if err != nil {
				t.Fatalf("Archive %s: %v", name, err)
			}
			if dest != filepath.Join(dir, FailedDir, name) || !exists(dest+ReportSuffix) {
				t.Errorf("Archive %s: %s, report there %v", name, dest, exists(dest+ReportSuffix))
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "secret.csv")); err != nil {
			t.Errorf("the link's target outside the folder: %v", err)
		}
		if rest := names(readyNow(t, f)); len(rest) != 1 || rest[0] != "good.csv" {
			t.Errorf("Ready after archiving the bad ones = %v, want [good.csv]", rest)
		}
	})
}

// TestReadyTransient: a shortage of the system (too many open files) is not
// the file's fault: Ready fails and the file stays, rather than going to
// failed/.
func TestReadyTransient(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.csv"), "externalId\nP1\n")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	f.wait = func(context.Context, time.Duration) error { return nil }
	f.open = func(*os.Root, string) (*os.File, error) {
		return nil, &fs.PathError{Op: "open", Path: "a.csv", Err: syscall.EMFILE}
	}
	if _, err := f.Ready(t.Context()); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("Ready = %v, want EMFILE", err)
	}
}

// TestArchiveChanged: a file written to between the read (Ready's hash)
// and the archive stays in the drop folder, unarchived, with no report
// left behind, whether its size, its mtime or only its content changed.
// Each change is tried on a file written just before Ready (its change
// time cannot vouch for it: Archive hashes it again) and on one whose
// status last changed more than vouchMargin before Ready (Archive trusts
// an unchanged change time, and a write moves it).
func TestArchiveChanged(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	changes := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"row appended", func(t *testing.T, path string) {
			fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.WriteString("P2\n"); err != nil {
				t.Fatal(err)
			}
			if err := fh.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"mtime moved", func(t *testing.T, path string) { setMtime(t, path, base.Add(time.Hour)) }},
		{"same size and mtime, other content", func(t *testing.T, path string) {
			write(t, path, "externalId\nP9\n")
			setMtime(t, path, base)
		}},
		{"replaced by another file", func(t *testing.T, path string) {
			write(t, path+".new", "externalId\nP1\n")
			setMtime(t, path+".new", base)
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	// The old files are all written first and left to age once.
	old := map[string]string{}
	for _, tc := range changes {
		old[tc.name] = t.TempDir()
		write(t, filepath.Join(old[tc.name], "employees.csv"), "externalId\nP1\n")
		setMtime(t, filepath.Join(old[tc.name], "employees.csv"), base)
	}
	time.Sleep(vouchMargin + 100*time.Millisecond)
	for _, age := range []string{"written just before", "unchanged for a while"} {
		for _, tc := range changes {
			t.Run(age+"/"+tc.name, func(t *testing.T) {
				dir := old[tc.name]
				if age == "written just before" {
					dir = t.TempDir()
					write(t, filepath.Join(dir, "employees.csv"), "externalId\nP1\n")
					setMtime(t, filepath.Join(dir, "employees.csv"), base)
				}
				archiveAfterChange(t, dir, age == "unchanged for a while", tc.name, tc.change)
			})
		}
	}
	t.Run("gone", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "employees.csv")
		write(t, path, "externalId\nP1\n")
		f := newFolder(t, sources.DropFolderOptions{Dir: dir})
		files := readyNow(t, f)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Archive(t.Context(), files[0], Processed, jsonReport(map[string]string{})); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Archive = %v, want ErrNotExist", err)
		}
		if got := namesIn(t, filepath.Join(dir, ProcessedDir)); len(got) != 0 {
			t.Errorf("processed/ holds %v, want nothing", got)
		}
	})
}

// archiveAfterChange finds the export in dir, changes it, and checks that
// Archive refuses it and the next Ready finds it again; vouched says
// whether its change time should vouch for its content.
func archiveAfterChange(t *testing.T, dir string, vouched bool, name string, change func(*testing.T, string)) {
	t.Helper()
	path := filepath.Join(dir, "employees.csv")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	files := readyNow(t, f)
	if len(files) != 1 {
		t.Fatalf("Ready = %v", names(files))
	}
	if got := !files[0].vouched.IsZero(); got != vouched {
		t.Fatalf("change time vouches: %v, want %v", got, vouched)
	}
	change(t, path)
	_, err := f.Archive(t.Context(), files[0], Processed, jsonReport(map[string]string{}))
	if !errors.Is(err, sources.ErrChanged) {
		t.Fatalf("Archive = %v, want ErrChanged", err)
	}
	if !exists(path) {
		t.Error("the changed file left the drop folder")
	}
	if got := namesIn(t, filepath.Join(dir, ProcessedDir)); len(got) != 0 {
		t.Errorf("processed/ holds %v, want nothing", got)
	}
	again := readyNow(t, f)
	if len(again) != 1 || again[0].Problem != nil {
		t.Fatalf("next Ready = %+v, want the file again", again)
	}
	if newContent := strings.Contains(name, "content") || strings.Contains(name, "appended"); newContent && again[0].SHA256 == files[0].SHA256 {
		t.Errorf("next Ready: hash %s unchanged, want the new content's", again[0].SHA256)
	}
}

// TestArchiveVouchedByChangeTime: Archive reads a file again only when its
// change time cannot vouch for its content: one open for a file written
// just before Ready, none for a file unchanged for longer than
// vouchMargin; and both are archived.
func TestArchiveVouchedByChangeTime(t *testing.T) {
	oldDir := t.TempDir()
	write(t, filepath.Join(oldDir, "employees.csv"), "externalId\nP1\n")
	time.Sleep(vouchMargin + 100*time.Millisecond)
	freshDir := t.TempDir()
	write(t, filepath.Join(freshDir, "employees.csv"), "externalId\nP1\n")
	for _, tc := range []struct {
		dir       string
		wantOpens int
	}{{oldDir, 0}, {freshDir, 1}} {
		f := newFolder(t, sources.DropFolderOptions{Dir: tc.dir})
		files := readyNow(t, f)
		if len(files) != 1 || files[0].Problem != nil {
			t.Fatalf("Ready = %+v", files)
		}
		opens := 0
		open := f.open
		f.open = func(root *os.Root, name string) (*os.File, error) {
			opens++
			return open(root, name)
		}
		if _, err := f.Archive(t.Context(), files[0], Processed, jsonReport(map[string]string{})); err != nil {
			t.Fatalf("Archive: %v", err)
		}
		if opens != tc.wantOpens {
			t.Errorf("Archive opened the file %d time(s), want %d", opens, tc.wantOpens)
		}
	}
}

// TestKeptStill: a writer that appends between Archive's check and its move
// (it had the file open) is caught after the move: the file goes back into
// the drop folder and its report is removed.
func TestKeptStill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "employees.csv")
	write(t, path, "externalId\nP1\n")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	files := readyNow(t, f)
	dest := filepath.Join(dir, ProcessedDir, "employees.csv")
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, dest+ReportSuffix, "{}")
	if err := os.Rename(path, dest); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(dest, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("P2\n"); err != nil {
		t.Fatal(err)
	}
	_ = fh.Close()
	if err := f.keptStill(dest, files[0], []string{dest + ReportSuffix}); !errors.Is(err, sources.ErrChanged) {
		t.Fatalf("keptStill = %v, want ErrChanged", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "externalId\nP1\nP2\n" {
		t.Errorf("back in the drop folder: %q, %v", b, err)
	}
	if got := namesIn(t, filepath.Join(dir, ProcessedDir)); len(got) != 0 {
		t.Errorf("processed/ holds %v, want nothing", got)
	}
}

// TestOpenUnchanged: Open reads the version Ready found, and refuses one
// replaced since; Unchanged sees a write made while it was read.
func TestOpenUnchanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "employees.csv")
	write(t, path, "externalId\nP1\n")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	files := readyNow(t, f)
	fh, err := f.Open(files[0])
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer fh.Close()
	if err := f.Unchanged(fh, files[0]); err != nil {
		t.Errorf("Unchanged at once = %v", err)
	}
	write(t, path, "externalId\nP1\nP2\n")
	if err := f.Unchanged(fh, files[0]); !errors.Is(err, sources.ErrChanged) {
		t.Errorf("Unchanged after a write = %v, want ErrChanged", err)
	}
	if _, err := f.Open(files[0]); !errors.Is(err, sources.ErrChanged) {
		t.Errorf("Open after a write = %v, want ErrChanged", err)
	}
}

func namesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"employees.csv", "employees.csv"},
		{"Mitarbeiter März 2025.csv", "Mitarbeiter März 2025.csv"},
		{"a\nb.csv", `"a\nb.csv"`},
		{"a\rb.csv", `"a\rb.csv"`},
		{"tab\there.csv", `"tab\there.csv"`},
		{"esc\x1b[31m.csv", `"esc\x1b[31m.csv"`},
		{"quote\".csv", `"quote\".csv"`},
		{"back\\slash.csv", `"back\\slash.csv"`},
		{"rtl\u202eVSC.exe", `"rtl\u202eVSC.exe"`},
		{"zero\u200bwidth.csv", `"zero\u200bwidth.csv"`},
		{"bad\xffutf8.csv", `"bad\xffutf8.csv"`},
		{"", `""`},
	} {
		got := DisplayName(tc.in)
		if got != tc.want {
			t.Errorf("DisplayName(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("DisplayName(%q) = %q holds a line break", tc.in, got)
		}
		if back := RawName(got); back != tc.in {
			t.Errorf("RawName(DisplayName(%q)) = %q", tc.in, back)
		}
	}
}

// TestDisplayRelRoundTrip: the archived path a run prints, with the name
// escaped, names the export for --file: FailedExport takes it back to the
// file on disk.
func TestDisplayRelRoundTrip(t *testing.T) {
	dir := t.TempDir()
	name := "a\nb.csv"
	write(t, filepath.Join(dir, name), "externalId\nP1\n")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	files := readyNow(t, f)
	dest, err := f.Archive(t.Context(), files[0], Failed, jsonReport(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	rel := f.DisplayRel(dest)
	if rel != `failed/"a\nb.csv"` {
		t.Fatalf("DisplayRel = %s", rel)
	}
	got, err := f.FailedExport(rel)
	if err != nil || got != name {
		t.Fatalf("FailedExport(%s) = %q, %v; want the raw name", rel, got, err)
	}
	back, err := f.Restore(t.Context(), rel)
	if err != nil || back.Name != name || !exists(filepath.Join(dir, name)) {
		t.Fatalf("Restore(%s) = %+v, %v", rel, back, err)
	}
}
