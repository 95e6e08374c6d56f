package config

import (
	"path/filepath"
	"testing"
)

// TestRemoteDropFolderRule: an SFTP or S3 drop folder is checked at load,
// each problem named by its key.
func TestRemoteDropFolderRule(t *testing.T) {
	base := "tenants:\n  - name: acme\n    companyId: 10000000-0000-4000-8000-000000000007\n    collectionId: 20000000-0000-4000-8000-000000000008\n    source:\n      csv:\n"
	sftpOK := "        type: sftp\n        sftp: {host: h, user: u, dir: /x, privateKeyFile: k, knownHostsFile: kh}\n"
	cases := []struct {
		name, csv, path, reason string
	}{
		{"unknown type", "        type: ftp\n", "tenants[0].source.csv.type", `unknown drop folder type "ftp"`},
		{"sftp without its keys", "        type: sftp\n", "tenants[0].source.csv.sftp", "is missing"},
		{"sftp with a local dir", sftpOK + "        dir: d\n", "tenants[0].source.csv.dir", "is for a local folder"},
		{"sftp without host", "        type: sftp\n        sftp: {user: u, dir: /x, privateKeyFile: k, knownHostsFile: kh}\n", "tenants[0].source.csv.sftp.host", "is empty"},
		{"sftp without credential", "        type: sftp\n        sftp: {host: h, user: u, dir: /x, knownHostsFile: kh}\n", "tenants[0].source.csv.sftp", "passwordFile or privateKeyFile"},
		{"sftp without host key check", "        type: sftp\n        sftp: {host: h, user: u, dir: /x, privateKeyFile: k}\n", "tenants[0].source.csv.sftp.knownHostsFile", "must be checked"},
		{"sftp with both host key choices", "        type: sftp\n        sftp: {host: h, user: u, dir: /x, privateKeyFile: k, knownHostsFile: kh, insecureIgnoreHostKey: true}\n", "tenants[0].source.csv.sftp.insecureIgnoreHostKey", "choose one"},
		{"sftp bad port", "        type: sftp\n        sftp: {host: h, port: 70000, user: u, dir: /x, privateKeyFile: k, knownHostsFile: kh}\n", "tenants[0].source.csv.sftp.port", "not a port"},
		{"s3 keys with type local", "        dir: d\n        s3: {endpoint: 'https://s3', bucket: b}\n", "tenants[0].source.csv.s3", "set type: s3"},
		{"s3 without scheme", "        type: s3\n        s3: {endpoint: s3.example.com, bucket: b}\n", "tenants[0].source.csv.s3.endpoint", "must start with https://"},
		{"s3 without bucket", "        type: s3\n        s3: {endpoint: 'https://s3'}\n", "tenants[0].source.csv.s3.bucket", "is empty"},
		{"s3 with one key file", "        type: s3\n        s3: {endpoint: 'https://s3', bucket: b, accessKeyFile: a}\n", "tenants[0].source.csv.s3", "both accessKeyFile and secretKeyFile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, base+c.csv, nil)
			if !hasProblem(problemsOf(t, err), c.path, c.reason) {
				t.Errorf("no problem %s: %s in\n%v", c.path, c.reason, err)
			}
		})
	}
	t.Run("sftp: the secret files are taken from the file's folder", func(t *testing.T) {
		dir := t.TempDir()
		cfg, err := Load(writeFile(t, dir, "hrsync.yaml", base+sftpOK), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		s := sftpOf(t, cfg.Tenants[0]).SFTP
		if s.PrivateKeyFile != filepath.Join(dir, "k") || s.KnownHostsFile != filepath.Join(dir, "kh") || s.Port != 22 || s.Dir != "/x" {
			t.Errorf("sftp options after load: %+v", *s)
		}
	})
}
