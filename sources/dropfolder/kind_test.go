package dropfolder_test

import (
	"testing"

	"hrsync/sources"
	"hrsync/sources/dropfolder"
	"hrsync/sources/dropkind"
)

// TestKindValidate: the local kind checks its dir beside the folder's and
// the CSV options it shares with the other drop folders.
func TestKindValidate(t *testing.T) {
	o := &dropfolder.Options{Common: dropkind.Common{DropFolderOptions: sources.DropFolderOptions{Pattern: "[", StableFor: -1}}}
	o.FillDefaults()
	var got []string
	for _, err := range o.Validate() {
		if fe, ok := err.(*sources.FieldError); ok { //nolint:errorlint // Validate returns bare *FieldError values
			got = append(got, fe.Path)
		}
	}
	want := map[string]bool{"dir": true, "pattern": true, "stableFor": true}
	for _, p := range got {
		delete(want, p)
	}
	if len(want) > 0 || o.Type != dropfolder.Type {
		t.Errorf("paths %q (type %q): missing %v", got, o.Type, want)
	}
}
