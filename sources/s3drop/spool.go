package s3drop

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// spoolMemory is the most of a report a spool holds in memory: a larger
// one (the JSON report of a first import of a million people) goes to a
// temporary file, so that its upload has a size and memory stays bounded.
const spoolMemory = 8 << 20

// spool keeps what is written, in memory up to its limit, then in a
// temporary file: an object's size must be known before its upload.
type spool struct {
	limit int
	buf   bytes.Buffer
	file  *os.File
	size  int64
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.buf.Len()+len(p) > s.limit {
		f, err := os.CreateTemp("", "hrsync-report-*")
		if err != nil {
			return 0, fmt.Errorf("spool the report: %w", err)
		}
		s.file = f
		if _, err := s.buf.WriteTo(f); err != nil {
			return 0, fmt.Errorf("spool the report: %w", err)
		}
	}
	s.size += int64(len(p))
	if s.file == nil {
		return s.buf.Write(p)
	}
	n, err := s.file.Write(p)
	if err != nil {
		return n, fmt.Errorf("spool the report: %w", err)
	}
	return n, nil
}

// reader reads back what was written, and its size.
func (s *spool) reader() (io.Reader, int64, error) {
	if s.file == nil {
		return bytes.NewReader(s.buf.Bytes()), s.size, nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("spool the report: %w", err)
	}
	return s.file, s.size, nil
}

// close removes the temporary file, if any.
func (s *spool) close() {
	if s.file != nil {
		_ = s.file.Close()
		_ = os.Remove(s.file.Name())
	}
}
