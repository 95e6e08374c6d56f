package dropfolder

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the file's status change time (ctime), when the
// system reports it.
func changeTime(st fs.FileInfo) (time.Time, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec), true
}
