package main_test

// Drop folders on a server (issue 13), end to end through the binary: an
// SFTP folder served by OpenSSH's sshd and an S3 prefix served by
// versitygw, both started by the test, both reached through a loopback
// proxy that can cut the connection mid-download. Drop, process, archive
// with the reports (JSON, HTML, rejects CSV); the connection dropping mid-download, the server
// restarting between the read and the archive, the export replaced while
// it is downloaded: nothing lost, nothing processed twice, no grant twice.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/crypto/ssh/knownhosts"

	"hrsync/internal/testservers"
)

// remoteDrop is a drop folder on a server, behind a proxy.
type remoteDrop struct {
	proxy *testservers.Proxy
	// upload drops a file through the server's own protocol.
	upload func(name string, content []byte) error
	// restart stops the server and starts it again; stop and start do
	// each half.
	restart func(t *testing.T)
	stop    func()
	start   func(t testing.TB)
}

// remoteBackends are the servers under test, each set up for an env.
var remoteBackends = []struct {
	name  string
	setup func(t *testing.T, rd *remoteDrop) func(e *env) []string
}{
	{"sftp", sftpDrop},
	{"s3", s3Drop},
}

// sftpDrop serves e.drop over SFTP from sshd, behind a proxy.
func sftpDrop(t *testing.T, rd *remoteDrop) func(e *env) []string {
	return func(e *env) []string {
		srv := testservers.StartSSHD(t)
		rd.proxy = testservers.StartProxy(t, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
		known := filepath.Join(e.dir, "known_hosts")
		line := knownhosts.Line([]string{knownhosts.Normalize(rd.proxy.Addr)}, srv.HostKey)
		if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		drop := e.drop
		rd.upload = func(name string, content []byte) error {
			p := filepath.Join(drop, name)
			if err := os.WriteFile(p+".part", content, 0o600); err != nil {
				return err
			}
			return os.Rename(p+".part", p)
		}
		rd.restart = func(t *testing.T) { srv.Stop(); srv.Start(t) }
		rd.stop, rd.start = srv.Stop, srv.Start
		return []string{
			"type: sftp",
			"sftp:",
			"  host: 127.0.0.1",
			fmt.Sprintf("  port: %d", rd.proxy.Port()),
			"  user: " + srv.User,
			"  dir: " + e.drop,
			"  privateKeyFile: " + srv.PrivateKeyFile,
			"  knownHostsFile: " + known,
		}
	}
}

// s3Drop serves a prefix of a bucket from versitygw, behind a proxy; e.drop
// becomes the folder versitygw keeps the prefix in, so that the tests look
// at the archived files as they do for a local folder.
func s3Drop(t *testing.T, rd *remoteDrop) func(e *env) []string {
	return func(e *env) []string {
		srv := testservers.StartVersityGW(t)
		srv.Bucket(t, "hr-drop")
		rd.proxy = testservers.StartProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"))
		e.drop = filepath.Join(srv.Root, "hr-drop", "acme")
		e.noFileModes = true // S3 objects have no mode
		for kind, v := range map[string]string{"access": srv.AccessKey, "secret": srv.SecretKey} {
			if err := os.WriteFile(filepath.Join(e.dir, kind), []byte(v+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		client := srv.Client(t)
		rd.upload = func(name string, content []byte) error {
			_, err := client.PutObject(context.Background(), "hr-drop", "acme/"+name, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{})
			return err
		}
		rd.restart = func(t *testing.T) { srv.Stop(); srv.Start(t) }
		rd.stop, rd.start = srv.Stop, srv.Start
		return []string{
			"type: s3",
			"s3:",
			"  endpoint: http://" + rd.proxy.Addr,
			"  bucket: hr-drop",
			"  prefix: acme/",
			"  accessKeyFile: " + filepath.Join(e.dir, "access"),
			"  secretKeyFile: " + filepath.Join(e.dir, "secret"),
		}
	}
}

// put uploads a file, failing the test if it cannot.
func (rd *remoteDrop) put(t *testing.T, name string, content []byte) {
	t.Helper()
	if err := rd.upload(name, content); err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
}

// eachRemote runs test, in parallel, once per backend, each with an env
// whose drop folder is on the backend's server.
func eachRemote(t *testing.T, test func(t *testing.T, e *env, rd *remoteDrop)) {
	t.Parallel()
	for _, b := range remoteBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rd := &remoteDrop{}
			e := newEnv(t, configOptions{dropFolder: b.setup(t, rd)})
			test(t, e, rd)
		})
	}
}

// paddedExport is an export of people with a wide notes column, so that a
// download is long enough to be cut in its middle.
func paddedExport(people []person) []byte {
	lines := strings.Split(strings.TrimSuffix(string(csvExport(people)), "\n"), "\n")
	pad := strings.Repeat("x", 2000)
	lines[0] += ",notes"
	for i := 1; i < len(lines); i++ {
		lines[i] += "," + pad
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestE2ERemoteDropFolder: an export uploaded to the server, one row of
// it rejected, is processed and archived in processed/ with its reports
// beside it on the server (JSON, HTML, rejects CSV; mode 0640 where the
// server has modes), linked from the run record that status shows; the
// rejects CSV, fixed and uploaded again, creates exactly the fixed person;
// a second export of the same content is a duplicate; exactly the people
// of the exports exist.
func TestE2ERemoteDropFolder(t *testing.T) {
	eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
		check := e.mustRun(0, "config", "check")
		if !strings.Contains(check.stdout, "drop folder") || !strings.Contains(check.stdout, "://") {
			t.Errorf("config check does not say where the drop folder is:\n%s", check.stdout)
		}
		rows := genPeople(0, 5)
		bad := genPerson(5)
		fixed := bad
		bad.email = "broken@@example.test"
		content := csvExport(append(slices.Clone(rows), bad))
		rd.put(t, "employees.csv", content)
		rd.put(t, "notes.txt", []byte("not an export"))
		e.mustRun(4, "run", "people")
		want := []string{"employees.csv", "employees.csv.rejects.csv", "employees.csv.report.html", "employees.csv.report.json"}
		if got := e.archived("processed"); !slicesEqual(got, want) {
			t.Fatalf("processed/ holds %v, want %v", got, want)
		}
		rep := e.report("processed", "employees.csv")
		if rep.Outcome != "attention" || rep.Counts["created"] != 5 || rep.Counts["rejected"] != 1 {
			t.Errorf("report: outcome %s counts %v, want attention with 5 created, 1 rejected", rep.Outcome, rep.Counts)
		}
		checkPeople(t, e, rows)
		checkRemoteReports(t, e, bad)
		checkStatusReports(t, e, want[1:])

		// The HR admin fixes the rejected row in the rejects CSV and
		// uploads it again: it creates the fixed person, departs nobody.
		rd.put(t, "employees.csv.rejects.csv", fixRejects(t, e, bad.email, fixed.email))
		e.mustRun(0, "run", "people")
		checkPeople(t, e, append(slices.Clone(rows), fixed))

		// The same content dropped again is recognised by its hash.
		rd.put(t, "employees-again.csv", content)
		e.mustRun(0, "run", "people")
		if again := e.report("processed", "employees-again.csv"); !again.Duplicate {
			t.Errorf("the same content dropped again is not a duplicate: %+v", again)
		}
		checkPeople(t, e, append(slices.Clone(rows), fixed))

		// status counts the files on the server, reports left out.
		rd.put(t, "later.csv", csvExport(rows[:1]))
		var status struct {
			Tenants []struct {
				Files *struct{ Waiting, Processed, Failed int } `json:"files"`
			} `json:"tenants"`
		}
		res := e.mustRun(0, "status", "--json")
		if err := json.Unmarshal([]byte(res.stdout), &status); err != nil {
			t.Fatalf("status --json: %v\n%s", err, res)
		}
		if len(status.Tenants) != 1 || status.Tenants[0].Files == nil ||
			*status.Tenants[0].Files != (struct{ Waiting, Processed, Failed int }{1, 3, 0}) {
			t.Errorf("status files: %s, want 1 waiting, 3 processed (the export, its corrections, the duplicate), 0 failed", res.stdout)
		}
	})
}

// checkRemoteReports checks the HTML report and the rejects CSV beside
// processed/employees.csv on the server: the HTML names the rejected line
// and the rejects CSV next to it, and neither e-mail address nor birth
// date; the rejects CSV (UTF-8 with BOM) holds the rejected row's own
// values, and the mode is reports.mode where the server has modes.
func checkRemoteReports(t *testing.T, e *env, bad person) {
	t.Helper()
	processed := filepath.Join(e.drop, "processed")
	for _, name := range []string{"employees.csv.report.html", "employees.csv.rejects.csv"} {
		fi, err := os.Stat(filepath.Join(processed, name))
		if err != nil {
			t.Fatalf("%s is not beside the archived export on the server: %v", name, err)
		}
		if !e.noFileModes && fi.Mode().Perm() != 0o640 {
			t.Errorf("%s has mode %v, want 0640 (reports.mode)", name, fi.Mode().Perm())
		}
	}
	page, err := os.ReadFile(filepath.Join(processed, "employees.csv.report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"employees.csv.rejects.csv", `<td class="num">7</td><td>email</td>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if strings.Contains(string(page), bad.email) || strings.Contains(string(page), bad.birth) {
		t.Errorf("the HTML report shows the rejected person's e-mail address or birth date")
	}
	recs := readRejects(t, e)
	if len(recs) != 2 || recs[1][0] != "7" || recs[1][3] != bad.id || recs[1][4] != bad.email {
		t.Errorf("rejects CSV %q: want the header and line 7 with %s's own values", recs, bad.id)
	}
}

// readRejects reads processed/employees.csv.rejects.csv, which must start
// with a UTF-8 byte order mark.
func readRejects(t *testing.T, e *env) [][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.drop, "processed", "employees.csv.rejects.csv"))
	if err != nil {
		t.Fatal(err)
	}
	body, ok := bytes.CutPrefix(raw, []byte("\xEF\xBB\xBF"))
	if !ok {
		t.Fatal("the rejects CSV has no UTF-8 byte order mark")
	}
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("rejects CSV: %v", err)
	}
	return recs
}

// fixRejects is the rejects CSV with the e-mail address from replaced by
// to, as an HR admin saves it from Excel (CSV UTF-8, with its BOM).
func fixRejects(t *testing.T, e *env, from, to string) []byte {
	t.Helper()
	recs := readRejects(t, e)
	for _, r := range recs[1:] {
		for i, v := range r {
			if v == from {
				r[i] = to
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString("\uFEFF")
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkStatusReports checks that status shows the people run's reports,
// beside its archived export, relative to the drop folder.
func checkStatusReports(t *testing.T, e *env, names []string) {
	t.Helper()
	var st struct {
		Runs []struct {
			Job     string   `json:"job"`
			Reports []string `json:"reports"`
		} `json:"runs"`
	}
	out := e.mustRun(0, "status", "-o", "json")
	if err := json.Unmarshal([]byte(out.stdout), &st); err != nil {
		t.Fatalf("status: %v\n%s", err, out.stdout)
	}
	var want, got []string
	for _, n := range names {
		want = append(want, "processed/"+n)
	}
	for _, r := range st.Runs {
		if r.Job == "people" {
			got = slices.Sorted(slices.Values(r.Reports))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("status: the people run's reports = %q, want %q", got, want)
	}
	text := e.mustRun(0, "status")
	if !strings.Contains(text.stdout, "processed/employees.csv.report.html") {
		t.Errorf("status does not show the HTML report:\n%s", text.stdout)
	}
}

// TestE2ERemoteConnectionDropsMidDownload: the connection is cut in the
// middle of the download that reads the export: the run fails, nothing is
// sent, the export stays; the next run processes it once.
func TestE2ERemoteConnectionDropsMidDownload(t *testing.T) {
	eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
		rows := genPeople(0, 60)
		content := paddedExport(rows)
		res := runMidDownload(t, e, rd, content, true, nil)
		if res.code == 0 {
			t.Fatalf("a run whose download was cut exited 0: %s", res)
		}
		t.Logf("run with the download cut: exit %d: %s", res.code, lastLine(t, res).Msg)
		if got := len(e.emu.people(t, e.company)); got != 0 {
			t.Fatalf("%d people created from a download cut in the middle", got)
		}
		if got := e.archived("processed"); len(got) != 0 {
			t.Fatalf("processed/ holds %v after a cut download", got)
		}
		e.mustRun(0, "run", "people")
		checkPeople(t, e, rows)
		if rep := e.report("processed", "employees.csv"); rep.Outcome != "ok" || rep.Counts["created"] != len(rows) {
			t.Errorf("report after the retry: %s %v", rep.Outcome, rep.Counts)
		}
	})
}

// TestE2ERemoteServerRestartsBeforeArchive: the server restarts while the
// run waits for the platform (after the read, before the archive): the
// archive connects again; the export is processed once.
func TestE2ERemoteServerRestartsBeforeArchive(t *testing.T) {
	eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
		rows := genPeople(0, 4)
		rd.put(t, "employees.csv", csvExport(rows))
		e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "2s", Count: 1})
		done := make(chan result, 1)
		go func() { done <- e.runNoFatal("run", "people") }()
		if !waitFor(90*time.Second, func() bool { return len(e.emu.people(t, e.company)) == len(rows) }) {
			t.Fatalf("the run never created the people")
		}
		rd.restart(t)
		if res := <-done; res.code != 0 {
			t.Fatalf("run across a server restart: %s", res)
		}
		if got := e.archived("processed"); !slicesEqual(got, []string{"employees.csv", "employees.csv.report.html", "employees.csv.report.json"}) {
			t.Fatalf("processed/ holds %v", got)
		}
		e.emu.clearRequests(t)
		e.mustRun(0, "run", "people")
		if n := len(e.emu.requests(t)); n != 0 {
			t.Errorf("the run after made %d calls, want none", n)
		}
		checkPeople(t, e, rows)
	})
}

// TestE2ERemoteReplacedDuringDownload: the export is replaced by a longer
// one while it is being downloaded: the version read is applied, but not
// archived (it changed after it was read): it stays, and the next run
// applies the new version, creating only the people it adds.
func TestE2ERemoteReplacedDuringDownload(t *testing.T) {
	eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
		first := genPeople(0, 40)
		content := paddedExport(first)
		all := genPeople(0, 42)
		var uploadErr error
		res := runMidDownload(t, e, rd, content, false, func() { uploadErr = rd.upload("employees.csv", paddedExport(all)) })
		if uploadErr != nil {
			t.Fatalf("replace the export during the download: %v", uploadErr)
		}
		if res.code == 0 {
			t.Fatalf("the run of an export replaced while downloaded exited 0 (it must say the export stays): %s", res)
		}
		t.Logf("run with the export replaced: exit %d: %s", res.code, lastLine(t, res).Msg)
		if got := e.archived("processed"); len(got) != 0 {
			t.Fatalf("processed/ holds %v: a replaced export was archived", got)
		}
		e.mustRun(0, "run", "people")
		checkPeople(t, e, all)
		if got := e.archived("processed"); !slicesEqual(got, []string{"employees.csv", "employees.csv.report.html", "employees.csv.report.json"}) {
			t.Fatalf("processed/ holds %v", got)
		}
	})
}

// runMidDownload drops content as employees.csv and runs the people job
// with the proxy armed half-way into the second download of the export
// (it is hashed when found, then read): there it runs action, then cuts
// the connection if cut is set. The test fails if the proxy never acted.
func runMidDownload(t *testing.T, e *env, rd *remoteDrop, content []byte, cut bool, action func()) result {
	t.Helper()
	rd.put(t, "employees.csv", content)
	size := int64(len(content))
	acted := rd.proxy.At(rd.proxy.Sent()+size+size/2, cut, action)
	res := e.runNoFatal("run", "people")
	select {
	case <-acted:
	default:
		t.Fatalf("the proxy never acted (the server sent %d bytes for an export of %d); run: %s", rd.proxy.Sent(), size, res)
	}
	return res
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// TestE2ERemoteRetryAfterSafeguard: after a safeguard stop on a server's
// drop folder, the --file command takes the export back from failed/ on
// the server and runs it once past the safeguards; the same command again
// is refused, the file being no longer in failed/.
func TestE2ERemoteRetryAfterSafeguard(t *testing.T) {
	eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
		staff := genPeople(0, 100)
		rd.put(t, "staff.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		// Half the staff and five new hires: too many departures.
		rd.put(t, "march.csv", csvExport(append(slices.Clone(staff[:50]), genPeople(300, 305)...)))
		e.mustRun(3, "run", "people")
		if !slices.Contains(e.archived("failed"), "march.csv") {
			t.Fatalf("failed/ holds %v, want march.csv", e.archived("failed"))
		}
		retry := []string{"run", "people", "--tenant", tenantName, "--override-safeguards", "--file", "failed/march.csv"}
		e.emu.clearRequests(t)
		e.mustRun(0, retry...)
		checkPeople(t, e, append(slices.Clone(staff), genPeople(300, 305)...))
		if n := countOp(e.emu.requests(t), "createPeople"); n != 1 {
			t.Errorf("%d createPeople calls, want 1 (the five new hires)", n)
		}
		if r := e.report("processed", "march.csv"); r.Outcome != "ok" || r.Counts["created"] != 5 || r.Counts["departed"] != 50 {
			t.Errorf("report: outcome %s, counts %v; want ok, 5 created, 50 departed", r.Outcome, r.Counts)
		}
		if got := e.archived("failed"); !slicesEqual(got, []string{"march.csv.report.html", "march.csv.report.json"}) {
			t.Errorf("failed/ holds %v, want the stopped run's report alone", got)
		}
		res := e.runNoFatal(retry...)
		if res.code != 2 || !strings.Contains(lastLine(t, res).Msg, "is no longer in failed/") {
			t.Errorf("the same --file again: want exit 2 saying it is no longer in failed/, got %s", res)
		}
	})
}
