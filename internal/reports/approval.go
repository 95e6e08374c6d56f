package reports

import "time"

// Approval says that an HR admin approved an export that a safeguard had
// stopped, by moving it from the drop folder's failed/ into approve/; the
// run that took it past the safeguards fills it in.
type Approval struct {
	// At is when the run took the approved export.
	At time.Time
	// By is who placed the export in approve/ where the backend knows it
	// (the file's owner, the SFTP or S3 user); empty when it does not.
	By string
	// StoppedRun is the id of the run whose safeguard stop is approved,
	// and Stops the safeguards that stopped it, in plain words.
	StoppedRun string
	Stops      []string
}
