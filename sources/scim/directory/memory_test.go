package directory_test

import (
	"testing"

	"hrsync/sources/scim/directory"
	"hrsync/sources/scim/directory/directorytest"
)

func TestMemoryConformance(t *testing.T) {
	directorytest.Run(t, func(*testing.T) directory.Directory { return directory.NewMemory(nil) })
}
