package s3drop

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"testing"
)

// TestSpool: what is written reads back whole with its size, from memory
// under the limit and from a temporary file past it, which close removes.
func TestSpool(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for name, c := range map[string]struct {
		pieces []string
		onDisk bool
	}{
		"in memory": {[]string{"abc", "def"}, false},
		"spilled":   {[]string{"abcd", "efgh", "ijkl"}, true},
	} {
		sp := &spool{limit: 10}
		want := ""
		for _, p := range c.pieces {
			if _, err := io.WriteString(sp, p); err != nil {
				t.Fatal(err)
			}
			want += p
		}
		if (sp.file != nil) != c.onDisk {
			t.Errorf("%s: on disk %v, want %v", name, sp.file != nil, c.onDisk)
		}
		r, size, err := sp.reader()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want || size != int64(len(want)) {
			t.Errorf("%s: read back %q (%d bytes), %v; want %q", name, got, size, err, want)
		}
		sp.close()
		if sp.file != nil {
			if _, err := os.Stat(sp.file.Name()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: the temporary file is still there after close: %v", name, err)
			}
		}
	}
}
