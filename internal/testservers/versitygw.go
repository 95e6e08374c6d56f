package testservers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvVersityGW names the variable that points at the versitygw binary (the
// Makefile sets it); without it, bin/tools/versitygw (make test-deps builds
// it at a pinned version), else versitygw on PATH.
const EnvVersityGW = "HRSYNC_TEST_VERSITYGW"

// S3 is versitygw serving S3 over a folder (its posix backend) on a
// loopback port: each folder of Root is a bucket, each file below an
// object.
type S3 struct {
	// Endpoint is its URL (plain HTTP, loopback).
	Endpoint string
	// AccessKey and SecretKey are its root credentials.
	AccessKey, SecretKey string
	// Root is the folder it serves.
	Root string

	bin, addr string
	proc      *process
}

// StartVersityGW starts versitygw for the test over a new temporary folder
// and stops it when the test ends.
func StartVersityGW(t testing.TB) *S3 {
	t.Helper()
	bin := Tool(t, EnvVersityGW, "versitygw")
	s := &S3{Root: t.TempDir(), bin: bin, AccessKey: "hrsynctest", SecretKey: randomHex(t)}
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	s.Endpoint = "http://" + s.addr
	s.Start(t)
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server (again, after Stop) on its port over its folder.
// The credentials go by the environment, not the command line.
func (s *S3) Start(t testing.TB) {
	t.Helper()
	env := []string{"ROOT_ACCESS_KEY_ID=" + s.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s.SecretKey}
	s.proc = startProcess(t, env, s.bin, "--port", s.addr, "--quiet",
		"posix", "--file-perms", "0600", "--dir-perms", "0700", s.Root)
	waitBanner(t, s.addr, "", s.proc.done)
}

// Stop kills the server.
func (s *S3) Stop() { s.proc.stop(false) }

// Client is a client of the server with its root credentials.
func (s *S3) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(s.addr, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")})
	if err != nil {
		t.Fatalf("s3 client: %v", err)
	}
	return c
}

// Bucket creates a bucket through the S3 API.
func (s *S3) Bucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Client(t).MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("bucket %s: %v", name, err)
	}
}

func randomHex(t testing.TB) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
