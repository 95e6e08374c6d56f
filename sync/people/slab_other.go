//go:build !unix

package people

// newSlabMemory returns size bytes of heap memory (no release: the
// collector frees them).
func newSlabMemory(size int) ([]byte, func([]byte)) {
	return make([]byte, size), nil
}
