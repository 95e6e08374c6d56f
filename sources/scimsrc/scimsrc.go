// Package scimsrc is the source kind "scim": a tenant whose people its
// identity provider (Okta, Microsoft Entra ID) pushes to hrsync over SCIM
// 2.0 (package sources/scim) rather than hrsync reading them from the
// company. The pushed users are kept in hrsync's state (the store's SCIM
// directory); this kind reads that directory as the people job reads an
// export:
//
//   - each active user that is not deleted is one row, mapped as an
//     export's columns are (externalId, e-mail, names, the enterprise
//     extension's department, the hrsync extension's start date, birthday,
//     location and balance override) and checked by the same validator;
//   - a user deactivated (active: false) or deleted is absent from the rows,
//     so the people job marks them departed, as for a file that no longer
//     lists them; a user active again is listed again, a return;
//   - the export is a snapshot of the directory at its last change sequence:
//     its name is "scim:<tenant>@<seq>" and its hash (SHA256) is that of the
//     tenant and the sequence. The same sequence is the same content, so a
//     run over a directory that has not changed since the last processed
//     one is a duplicate and sends nothing; new users are created with their
//     balance exactly once by the sender, whatever the hash.
//
// A mass deactivation trips the people job's safeguards like a short file:
// the run stops before any call, and only an operator's
// `hrsync run people --tenant T --override-safeguards` lifts it (there is
// no drop folder, hence no approve/ folder, for a directory).
//
// The SCIM endpoint (sources/scim) serves every tenant whose source is this
// kind: TokenOf(tenant.Source.Options) gives the tenant's token for its
// scim.Options.Tenants, and (*store.Store).SCIMDirectory() is its
// Directory, the same one this kind reads back through registry.Env's
// Directory (the store).
package scimsrc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/sources/scim/directory"
)

// columns names each field of a person after the SCIM attribute it is read
// from: rejections name the attribute ("emails: ...").
func columns() map[sources.Field]string {
	return map[sources.Field]string{
		sources.ExternalID: "externalId",
		sources.Email:      "emails",
		sources.FirstName:  "name.givenName",
		sources.LastName:   "name.familyName",
		sources.Department: "department",
		sources.Location:   "location",
		sources.StartDate:  "startDate",
		sources.BirthDate:  "birthDate",
		sources.AddBalance: "balanceOverride",
	}
}

// mapping is the fixed mapping of SCIM attributes to fields, with the
// options' balance bound.
func (o *Options) mapping() sources.Mapping {
	m := sources.Mapping{Columns: map[string]string{}, MaxBalance: o.MaxBalance}
	for f, attr := range columns() {
		m.Columns[f.String()] = attr
	}
	return m.WithDefaults()
}

// Source is a tenant's SCIM directory as a registry.Source: its feed and its
// last good export are both the directory as it is now.
type Source struct {
	tenant  string
	dir     directory.Feed
	mapping sources.Mapping
}

// errNoState is the error of a directory read where no state is open.
var errNoState = errors.New("the SCIM directory is kept in hrsync's state, which this command does not open")

// Snapshot reads the directory once and returns it as an export.
func (s *Source) Snapshot(ctx context.Context) (*Export, error) {
	if s.dir == nil {
		return nil, fmt.Errorf("tenant %s: %w", s.tenant, errNoState)
	}
	users, seq, err := s.dir.SCIMUsers(ctx, s.tenant, 0)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: read the SCIM directory: %w", s.tenant, err)
	}
	x := &Export{tenant: s.tenant, seq: seq, mapping: s.mapping, now: time.Now}
	for _, u := range users {
		if u.Active && u.Deleted.IsZero() {
			x.rows = append(x.rows, rowOf(u.User, len(x.rows)+1))
		}
	}
	return x, nil
}

// Feed is the directory as it is now: one export.
func (s *Source) Feed(ctx context.Context) ([]sources.Export, error) {
	x, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return []sources.Export{x}, nil
}

// LastExport is the directory as it is now.
func (s *Source) LastExport(ctx context.Context, _ registry.LastRecord) (sources.Source, bool, error) {
	x, err := s.Snapshot(ctx)
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// refusal is the refusal of what a directory cannot do.
func refusal(err error) *registry.Refusal {
	return &registry.Refusal{Reason: "reads the SCIM directory its identity provider pushes, not a drop folder", Err: err}
}

// CheckRestore refuses: a directory keeps no failed exports.
func (s *Source) CheckRestore(context.Context, string) error { return refusal(registry.ErrNoRestore) }

// Restore refuses: a directory keeps no failed exports.
func (s *Source) Restore(context.Context, string) (sources.Export, error) {
	return nil, refusal(registry.ErrNoRestore)
}

// Folder refuses: a directory has no drop folder.
func (s *Source) Folder() (sources.DropFolder, error) { return nil, refusal(registry.ErrNoFolder) }

// Export is one snapshot of a tenant's directory: its active users as rows.
type Export struct {
	tenant  string
	seq     int64
	rows    []sources.Row
	mapping sources.Mapping
	now     func() time.Time
}

// Name is "scim:<tenant>@<seq>", the source of rejections: the directory
// at its last change sequence.
func (x *Export) Name() string { return "scim:" + x.tenant + "@" + strconv.FormatInt(x.seq, 10) }

// Seq is the directory's last change sequence the snapshot holds (0 for a
// directory nothing was ever written to).
func (x *Export) Seq() int64 { return x.seq }

// Len is how many active users the snapshot holds.
func (x *Export) Len() int { return len(x.rows) }

// SHA256 identifies the snapshot: the hex SHA-256 of the tenant and the
// change sequence. The directory at one sequence has one content, so it is
// the content's identity, as a file's hash is.
func (x *Export) SHA256() string {
	sum := sha256.Sum256([]byte("scim\x00" + x.tenant + "\x00" + strconv.FormatInt(x.seq, 10)))
	return hex.EncodeToString(sum[:])
}

// Size is 0: a snapshot has no file.
func (x *Export) Size() int64 { return 0 }

// Archive does nothing: a snapshot has nothing to archive.
func (x *Export) Archive(bool, sources.RenderReports) (string, error) { return "", nil }

// Directory marks the export as a directory an identity provider pushes
// (sources.Pushed): a safeguard stop of it is lifted from the command line.
func (x *Export) Directory() bool { return true }

// Read checks the snapshot's rows as an export's and hands them to h.
func (x *Export) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	v, err := sources.NewValidator(x.Name(), x.mapping, x.now())
	if err != nil {
		return sources.Stats{}, err
	}
	return sources.Run(ctx, v, &rowReader{rows: x.rows}, h)
}

// rowReader hands a snapshot's rows to sources.Run.
type rowReader struct {
	rows []sources.Row
	next int
}

// Next copies the next rows into b.
func (r *rowReader) Next(_ context.Context, b *sources.Batch) error {
	if r.next >= len(r.rows) {
		return io.EOF
	}
	end := min(r.next+sources.BatchLen, len(r.rows))
	b.Rows = append(b.Rows[:0], r.rows[r.next:end]...)
	r.next = end
	return nil
}

// Fill has nothing to do: the rows are whole.
func (r *rowReader) Fill(*sources.Batch) error { return nil }

// rowOf maps a user to a row, as an export's columns are mapped.
func rowOf(u directory.User, line int) sources.Row {
	r := sources.Row{Line: line}
	r.Text[sources.ExternalID] = u.ExternalID
	if strings.TrimSpace(u.ExternalID) == "" {
		r.Text[sources.ExternalID] = u.EmployeeNumber
	}
	r.Text[sources.Email] = emailOf(u)
	r.Text[sources.FirstName] = u.GivenName
	r.Text[sources.LastName] = u.FamilyName
	r.Text[sources.Department] = u.Department
	r.Text[sources.Location] = u.Location
	r.Text[sources.StartDate] = u.StartDate
	r.Text[sources.BirthDate] = u.BirthDate
	if u.BalanceOverride != nil {
		r.Text[sources.AddBalance] = strconv.FormatFloat(*u.BalanceOverride, 'f', -1, 64)
	}
	return r
}

// emailOf is a user's e-mail address: the primary one, else the first of
// type work, else the first; without any, the userName when it is an
// address (Entra's userPrincipalName often is).
func emailOf(u directory.User) string {
	for _, e := range u.Emails {
		if e.Primary {
			return e.Value
		}
	}
	for _, e := range u.Emails {
		if strings.EqualFold(e.Type, "work") {
			return e.Value
		}
	}
	if len(u.Emails) > 0 {
		return u.Emails[0].Value
	}
	if strings.Contains(u.UserName, "@") {
		return u.UserName
	}
	return ""
}
