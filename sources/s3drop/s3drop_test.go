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
			defer obj.Close()
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

// TestS3PrefixCannotEscape: S3 has no links, so processed/ and failed/
// cannot lead elsewhere; the equivalent risk is a key that names a place
// outside the folder's prefix. A key that climbs out of it
// ("acme/../outside.csv", which the client or server cleans to
// outside.csv) is no export of the folder (List keeps only the keys
// directly under the prefix), and archiving an export writes only under
// the prefix's processed/.
func TestS3PrefixCannotEscape(t *testing.T) {
	srv := testservers.StartVersityGW(t)
	srv.Bucket(t, "hr-drop")
	t.Setenv("HRSYNC_TEST_S3_ACCESS", srv.AccessKey)
	t.Setenv("HRSYNC_TEST_S3_SECRET", srv.SecretKey)
	client := srv.Client(t)
	ctx := context.Background()
	put := func(key string) {
		t.Helper()
		body := droptest.Export(1, 1)
		if _, err := client.PutObject(ctx, "hr-drop", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Logf("put %s refused by the server: %v", key, err)
		}
	}
	put("acme/employees.csv")
	put("acme/../outside.csv") // refused, or kept outside acme/ by the server: never an export of acme/
	opts := &s3drop.Options{
		Common: dropkind.Common{DropFolderOptions: sources.DropFolderOptions{StableFor: time.Millisecond}, CSVOptions: droptest.CSV()},
		S3: &s3drop.S3Options{
			Endpoint: srv.Endpoint, Bucket: "hr-drop", Prefix: "acme/",
			AccessKeyEnv: "HRSYNC_TEST_S3_ACCESS", SecretKeyEnv: "HRSYNC_TEST_S3_SECRET",
		},
	}
	folder, err := droptest.OpenKind(opts, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	got, err := folder.Ready(ctx)
	if err != nil || len(got) != 1 || got[0].Name() != "employees.csv" {
		t.Fatalf("Ready: %d %v, want employees.csv alone", len(got), err)
	}
	if _, err := got[0].Archive(true, droptest.Reports(`{}`)); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	for obj := range client.ListObjects(ctx, "hr-drop", minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		if !strings.HasPrefix(obj.Key, "acme/") && obj.Key != "outside.csv" && obj.Key != "acme/../outside.csv" {
			t.Errorf("object %q outside the folder's prefix", obj.Key)
		}
		if strings.HasPrefix(obj.Key, "acme/processed/") && !strings.HasPrefix(obj.Key, "acme/processed/employees.csv") {
			t.Errorf("object %q in processed/ that is not the export or its reports", obj.Key)
		}
	}
}
