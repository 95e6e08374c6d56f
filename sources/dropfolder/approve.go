package dropfolder

import (
	"context"
	"os/user"
	"strconv"
	"syscall"
)

// Approvals returns the files an HR admin placed in approve/, oldest
// first, each hashed: every file not ignored (the pattern does not apply:
// what is there was put there on purpose), complete once its size and
// modification time held over StableFor (a move into approve/ is at once;
// markers are not used there). approve/ is created when it is not there,
// so that the admin finds it beside processed/ and failed/; while one of
// the sub-folders is a link, nothing is listed (sources.SubfolderError).
func (f *Folder) Approvals(ctx context.Context) ([]File, error) {
	if err := f.checkSubfolders(); err != nil {
		return nil, err
	}
	if _, err := f.makeSubfolder(ApproveDir); err != nil {
		return nil, err
	}
	return f.readyIn(ctx, ApproveDir, "", false)
}

// Owner is the name of the user who owns the file, from what Lstat said of
// it when it was found: the login name where the system knows the user,
// else "uid N"; "" where the system keeps no owner.
func (file File) Owner() string {
	if file.info == nil {
		return ""
	}
	st, ok := file.info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return ownerName(st.Uid)
}

// ownerName is the login name of uid, or "uid N" when it has none.
func ownerName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + id
}
