//go:build unix

package people

import "syscall"

// newSlabMemory maps size bytes of anonymous memory, outside the Go heap,
// and returns them with the function that unmaps them; if the mapping
// fails, it returns heap memory (and no release).
func newSlabMemory(size int) ([]byte, func([]byte)) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, size), nil
	}
	return b, func(b []byte) { _ = syscall.Munmap(b) }
}
