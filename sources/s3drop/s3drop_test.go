package s3drop_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"hrsync/internal/testservers"
	"hrsync/sources"
	"hrsync/sources/dropkind"
	"hrsync/sources/droptest"
	"hrsync/sources/s3drop"
)

// TestS3Protocol runs the protocol suite against versitygw, each folder a
// prefix of its own in one bucket.
func TestS3Protocol(t *testing.T) {
	srv := testservers.StartVersityGW(t)
	srv.Bucket(t, "hr-drop")
	t.Setenv("HRSYNC_TEST_S3_ACCESS", srv.AccessKey)
	t.Setenv("HRSYNC_TEST_S3_SECRET", srv.SecretKey)
	client := srv.Client(t)
	var n atomic.Int64
	var prefix string
	ctx := context.Background()
	droptest.Run(t, droptest.Harness{
		Open: func(t *testing.T, opts sources.DropFolderOptions, csv sources.CSVOptions) sources.DropFolder {
			prefix = "exports/" + strconv.FormatInt(n.Add(1), 10)
			folder, err := droptest.OpenKind(&s3drop.Options{
				Common: dropkind.Common{DropFolderOptions: opts, CSVOptions: csv},
				S3: &s3drop.S3Options{
					Endpoint: srv.Endpoint, Bucket: "hr-drop", Prefix: prefix + "/",
					AccessKeyEnv: "HRSYNC_TEST_S3_ACCESS", SecretKeyEnv: "HRSYNC_TEST_S3_SECRET",
				},
			}, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return folder
		},
		Put: func(t *testing.T, name string, content []byte) {
			_, err := client.PutObject(ctx, "hr-drop", prefix+"/"+name, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{})
			if err != nil {
				t.Fatalf("put %s: %v", name, err)
			}
		},
		Get: func(t *testing.T, name string) ([]byte, bool) {
			obj, err := client.GetObject(ctx, "hr-drop", prefix+"/"+name, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close() //nolint:errcheck // read only
			b, err := io.ReadAll(obj)
			if minio.ToErrorResponse(err).Code == "NoSuchKey" {
				return nil, false
			}
			if err != nil {
				t.Fatalf("get %s: %v", name, err)
			}
			return b, true
		},
		Restart: func(t *testing.T) {
			srv.Stop()
			srv.Start(t)
		},
	})
}

// TestS3Credentials: a folder without credentials is refused at open,
// naming the variables to set; wrong credentials fail the listing.
func TestS3Credentials(t *testing.T) {
	srv := testservers.StartVersityGW(t)
	srv.Bucket(t, "hr-drop")
	opts := &s3drop.Options{
		Common: dropkind.Common{DropFolderOptions: sources.DropFolderOptions{StableFor: time.Millisecond}, CSVOptions: droptest.CSV()},
		S3: &s3drop.S3Options{
			Endpoint: srv.Endpoint, Bucket: "hr-drop", AccessKeyEnv: "HRSYNC_TEST_S3_NONE_A", SecretKeyEnv: "HRSYNC_TEST_S3_NONE_S",
		},
	}
	_, err := droptest.OpenKind(opts, nil)
	if err == nil || !strings.Contains(err.Error(), "HRSYNC_TEST_S3_NONE_A") {
		t.Fatalf("open without credentials: %v, want the variables named", err)
	}
	t.Setenv("HRSYNC_TEST_S3_NONE_A", srv.AccessKey)
	t.Setenv("HRSYNC_TEST_S3_NONE_S", "wrong")
	folder, err := droptest.OpenKind(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := folder.Ready(context.Background()); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("Ready with a wrong secret: %v, want a refusal that does not echo the secret", err)
	}
}
