// Package s3drop is the S3 backend of drop folders: a key prefix of a
// bucket of an S3-compatible object store (github.com/minio/minio-go), with
// credentials from the environment or mounted files. processed/ and failed/
// are prefixes under the folder's; archiving copies an object there and
// deletes the original. It registers itself as the drop folder type "s3";
// remotedrop keeps the protocol, the ETag telling one version of an object
// from another.
package s3drop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"hrsync/sources"
	"hrsync/sources/remotedrop"
)

// Defaults of the environment variables of the credentials.
const (
	DefaultAccessKeyEnv = "AWS_ACCESS_KEY_ID"
	DefaultSecretKeyEnv = "AWS_SECRET_ACCESS_KEY" //nolint:gosec // the name of a variable, not a secret
)

// Open opens the S3 folder opts locates, read as cfg says. The
// credentials are read now (a rotated secret is picked up by the next run).
func Open(opts S3Options, cfg sources.DropConfig) (sources.DropFolder, error) {
	client, err := newClient(opts, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	st := &store{client: client, bucket: opts.Bucket, prefix: strings.TrimSuffix(opts.Prefix, "/"), spoolMemory: spoolMemory}
	dial := func(context.Context) (remotedrop.Store, error) { return st, nil }
	return remotedrop.New(dial, cfg), nil
}

// newClient returns a client of the server opts names, with the
// credentials of opts (files) or of the environment env looks up.
func newClient(opts S3Options, env func(string) (string, bool)) (*minio.Client, error) {
	u, err := url.Parse(opts.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("s3 endpoint %q: not a URL", opts.Endpoint)
	}
	access, secret, err := keys(opts, env)
	if err != nil {
		return nil, fmt.Errorf("s3 %s: %w", u.Host, err)
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(access, secret, ""),
		Secure: u.Scheme == "https",
		Region: opts.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 %s: %w", u.Host, err)
	}
	return client, nil
}

// keys reads the access key and the secret from the files of opts, or
// from the environment.
func keys(opts S3Options, env func(string) (string, bool)) (string, string, error) {
	if opts.AccessKeyFile != "" {
		access, err := os.ReadFile(opts.AccessKeyFile)
		if err != nil {
			return "", "", fmt.Errorf("accessKeyFile: %w", err)
		}
		secret, err := os.ReadFile(opts.SecretKeyFile)
		if err != nil {
			return "", "", fmt.Errorf("secretKeyFile: %w", err)
		}
		return strings.TrimSpace(string(access)), strings.TrimSpace(string(secret)), nil
	}
	accessEnv, secretEnv := opts.AccessKeyEnv, opts.SecretKeyEnv
	if accessEnv == "" {
		accessEnv = DefaultAccessKeyEnv
	}
	if secretEnv == "" {
		secretEnv = DefaultSecretKeyEnv
	}
	access, ok1 := env(accessEnv)
	secret, ok2 := env(secretEnv)
	if !ok1 || !ok2 || access == "" || secret == "" {
		return "", "", fmt.Errorf("no credentials: set %s and %s, or accessKeyFile and secretKeyFile", accessEnv, secretEnv)
	}
	return access, secret, nil
}

// store is the folder prefix of bucket. S3 has no sessions: one store
// serves every step, and Close does nothing.
type store struct {
	client *minio.Client
	bucket string
	prefix string
	// spoolMemory is the most of a report held in memory before its
	// upload; the rest waits in a temporary file.
	spoolMemory int
}

// key is the object key of a name of the folder.
func (s *store) key(name string) string {
	if s.prefix == "" {
		return name
	}
	return s.prefix + "/" + name
}

// notFound tells whether err says the object or bucket is not there.
func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NotFound"
}

// entry describes an object; By is its owner where the listing gives it
// (a HEAD does not). Listings give times to the millisecond and
// HEAD to the second: both are cut to the second.
func entry(name string, info minio.ObjectInfo) remotedrop.Entry {
	by := info.Owner.DisplayName
	if by == "" {
		by = info.Owner.ID
	}
	return remotedrop.Entry{Name: name, Size: info.Size, ModTime: info.LastModified.Truncate(time.Second).UTC(), ETag: info.ETag, By: by}
}

// List returns the objects directly under dir (not those further down).
func (s *store) List(ctx context.Context, dir string) ([]remotedrop.Entry, error) {
	prefix := s.prefix
	if dir != "" {
		prefix = s.key(dir)
	}
	if prefix != "" {
		prefix += "/"
	}
	var out []remotedrop.Entry
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", s.bucket, prefix, obj.Err)
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		if name == "" || strings.Contains(name, "/") {
			continue // a "folder" below
		}
		out = append(out, entry(name, obj))
	}
	return out, nil
}

// Stat describes one object.
func (s *store) Stat(ctx context.Context, name string) (remotedrop.Entry, error) {
	info, err := s.client.StatObject(ctx, s.bucket, s.key(name), minio.StatObjectOptions{})
	if notFound(err) {
		return remotedrop.Entry{}, fmt.Errorf("%s: %w", sources.DisplayName(path.Base(name)), fs.ErrNotExist)
	}
	if err != nil {
		return remotedrop.Entry{}, err
	}
	return entry(path.Base(name), info), nil
}

// Open opens an object for reading.
func (s *store) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(name), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat() // the request is made here
	}
	switch {
	case notFound(err):
		return nil, fmt.Errorf("%s: %w", sources.DisplayName(path.Base(name)), fs.ErrNotExist)
	case minio.ToErrorResponse(err).Code == "AccessDenied":
		return nil, fmt.Errorf("%s: %w", sources.DisplayName(path.Base(name)), fs.ErrPermission)
	case err != nil:
		return nil, err
	}
	return obj, nil
}

// WriteReport puts a new object, failing if the name is taken (checked
// first: a tenant's runs hold a lock, so no other writer of reports races).
// S3 objects have no file mode: mode is not used; who reads the reports is
// the bucket's policy. The content type follows the name's suffix, so that
// a browser opens the HTML report as a page.
func (s *store) WriteReport(ctx context.Context, name string, write func(io.Writer) error, _ fs.FileMode) error {
	if _, err := s.Stat(ctx, name); err == nil {
		return fs.ErrExist
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sp := &spool{limit: s.spoolMemory}
	defer sp.close()
	if err := write(sp); err != nil {
		return err
	}
	body, size, err := sp.reader()
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, s.bucket, s.key(name), body, size, minio.PutObjectOptions{ContentType: contentType(name)})
	return err
}

// contentType is the MIME type of a report (or marker) named name.
func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, sources.HTMLReportSuffix):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(name, sources.RejectsSuffix):
		return "text/csv; charset=utf-8"
	case strings.HasSuffix(name, sources.ReportSuffix):
		return "application/json"
	}
	return "application/octet-stream"
}

// Archive copies from to to on the condition that from still has the ETag
// read, then deletes from if it still has it: an object replaced after the
// copy stays in the folder for the next run.
func (s *store) Archive(ctx context.Context, from, to string, want remotedrop.Entry) error {
	if _, err := s.Stat(ctx, to); err == nil {
		return fs.ErrExist
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, err := s.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: s.bucket, Object: s.key(to)},
		minio.CopySrcOptions{Bucket: s.bucket, Object: s.key(from), MatchETag: want.ETag})
	switch {
	case notFound(err):
		return fs.ErrNotExist
	case minio.ToErrorResponse(err).Code == "PreconditionFailed":
		return sources.ErrChanged
	case err != nil:
		return fmt.Errorf("copy: %w", err)
	}
	now, err := s.Stat(ctx, from)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // deleted meanwhile: archived all the same
	case err != nil:
		return err
	case now.ETag != want.ETag:
		return nil // a new version: it stays, for the next run
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.key(from), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("delete the original: %w", err)
	}
	return nil
}

// Remove deletes an object. S3 deletes a missing key without error: a
// Stat first tells it.
func (s *store) Remove(ctx context.Context, name string) error {
	if _, err := s.Stat(ctx, name); err != nil {
		return err
	}
	return s.client.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{})
}

// Close does nothing: S3 has no sessions.
func (s *store) Close() error { return nil }
