package main_test

// Helpers of the end-to-end and crash tests: they build the real hrsync
// binary once, start the emulator as a real process on a loopback port,
// write a configuration and exports into a test's temporary folder, run
// the binary, and read the emulator's state through its /_emulator/
// endpoints.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	_ "modernc.org/sqlite" // reads the worker's state between runs
)

// pgEnv names the variable that gives the PostgreSQL server the
// PostgreSQL variants of the tests run against.
const pgEnv = "HRSYNC_TEST_POSTGRES_URL"

// Kinds of store a test env can use.
const (
	storeSQLite   = "sqlite"
	storePostgres = "postgres"
)

// storeKinds are the stores the store-sensitive tests run on.
func storeKinds() []string { return []string{storeSQLite, storePostgres} }

// e2eToken is the bearer token the emulator accepts in these tests. It is
// a test value, passed to hrsync only through HRSYNC_API_TOKEN.
const e2eToken = "e2e-test-token"

// tenantName is the one tenant of the test configurations.
const tenantName = "acme"

// commandTimeout bounds one run of the binary; a run that hangs fails the
// test instead of hanging it.
const commandTimeout = 3 * time.Minute

// binaryPath is where TestMain builds hrsync: a folder of this test
// process, so that parallel test processes never share a binary.
func binaryPath() string {
	return filepath.Join(os.TempDir(), "hrsync-e2e-"+strconv.Itoa(os.Getpid()), "hrsync")
}

// TestMain builds the binary the tests run, once, and removes it afterwards.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	bin := binaryPath()
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: create build folder:", err)
		return 1
	}
	defer os.RemoveAll(filepath.Dir(bin))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build hrsync:", err)
		return 1
	}
	return m.Run()
}

// result is what one run of the binary did.
type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// env is a test's world: its folder, the emulator it talks to and the
// configuration file that points at both.
type env struct {
	t       *testing.T
	dir     string
	drop    string
	config  string
	emu     *emulatorProc
	company string
	coll    string
	// storeKind is storeSQLite or storePostgres.
	storeKind string
	// pgURL and schema name the PostgreSQL store (storePostgres only);
	// the URL reaches the binary only through HRSYNC_STORE_URL.
	pgURL  string
	schema string
	// noFileModes says the drop folder's backend has no file modes (S3):
	// the reports' mode is not asserted there.
	noFileModes bool
}

// in returns the env for a subtest: its helpers report to t.
func (e *env) in(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// configOptions are the parts of the configuration a test varies.
type configOptions struct {
	batchSize   int
	concurrency int
	timeout     time.Duration
	maxAttempts int
	// store is storeSQLite (the default when empty) or storePostgres.
	store string
	// dropFolder, when set, gives the keys of the tenant's drop folder
	// (under source.csv, without indent) in place of "dir: <e.drop>";
	// it may start a server and point e.drop at the folder it serves.
	dropFolder func(e *env) []string
}

// postgresURL returns the test server's URL, failing the test when unset.
func postgresURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(pgEnv)
	if u == "" {
		t.Fatalf("the PostgreSQL variant needs a server: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgEnv)
	}
	return u
}

// freshSchema names a new random PostgreSQL schema for the test and drops
// it, with everything in it, when the test ends.
func freshSchema(t *testing.T, pgURL string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random schema name: %v", err)
	}
	schema := "hrsync_e2e_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		db, err := sql.Open("postgres", pgURL)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// newEnv starts an emulator and writes a configuration for one tenant fed
// by a drop folder in the test's temporary folder, with a SQLite store in
// that folder, or with opts.store set to storePostgres, a fresh schema of
// the server HRSYNC_TEST_POSTGRES_URL names (dropped when the test ends).
func newEnv(t *testing.T, opts configOptions) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), storeKind: storeSQLite}
	storeCfg := "  url: sqlite:" + filepath.Join(e.dir, "state.db")
	switch opts.store {
	case "", storeSQLite:
	case storePostgres:
		e.storeKind = storePostgres
		e.pgURL = postgresURL(t)
		// Registered before the emulator starts, so dropped after it stops.
		e.schema = freshSchema(t, e.pgURL)
		storeCfg = "  schema: " + e.schema
	default:
		t.Fatalf("unknown store %q", opts.store)
	}
	emu := startEmulator(t)
	ds := emu.dataset(t)
	e.emu, e.company = emu, ds.CompanyID
	for _, c := range ds.Collections {
		if !c.Personalizable {
			e.coll = c.ID
			break
		}
	}
	if e.coll == "" && len(ds.Collections) > 0 {
		e.coll = ds.Collections[0].ID
	}
	if e.company == "" || e.coll == "" {
		t.Fatalf("the emulator's dataset names no company or collection: %+v", ds)
	}
	e.drop = filepath.Join(e.dir, "drop")
	if err := os.MkdirAll(e.drop, 0o700); err != nil {
		t.Fatal(err)
	}
	if opts.batchSize == 0 {
		opts.batchSize = 25
	}
	if opts.concurrency == 0 {
		opts.concurrency = 2
	}
	if opts.timeout == 0 {
		opts.timeout = 20 * time.Second
	}
	if opts.maxAttempts == 0 {
		opts.maxAttempts = 3
	}
	drop := "dir: " + e.drop
	if opts.dropFolder != nil {
		drop = strings.Join(opts.dropFolder(e), "\n        ")
	}
	e.config = filepath.Join(e.dir, "hrsync.yaml")
	cfg := fmt.Sprintf(`store:
%s
api:
  baseUrl: %s
  timeout: %s
  ratePerSecond: 1000
  burst: 100
  maxConcurrency: 8
  maxAttempts: %d
log:
  level: info
  format: json
tenants:
%s`, storeCfg, emu.url, opts.timeout, opts.maxAttempts,
		csvTenantKeysYAML(tenantName, e.company, e.coll, drop, opts.batchSize, opts.concurrency))
	if err := os.WriteFile(e.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// csvTenantYAML is the configuration of a tenant fed by a drop folder, as
// an item of the tenants list (more keys of the tenant may follow); dir is
// the local drop folder (see csvTenantKeysYAML for the other types).
func csvTenantYAML(name, company, coll, dir string, batchSize, concurrency int) string {
	return csvTenantKeysYAML(name, company, coll, "dir: "+dir, batchSize, concurrency)
}

// csvTenantKeysYAML is csvTenantYAML with the drop folder's keys given as
// they go under source.csv ("dir: /x", or the lines of an SFTP folder
// joined with a newline and eight spaces).
func csvTenantKeysYAML(name, company, coll, dropKeys string, batchSize, concurrency int) string {
	return fmt.Sprintf(`  - name: %s
    companyId: %s
    collectionId: %s
    source:
      csv:
        %s
        stableFor: 1ms
    people:
      batchSize: %d
      concurrency: %d
      defaultBalance: 25
`, name, company, coll, dropKeys, batchSize, concurrency)
}

// command returns the binary run with the test's configuration and token.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{}, args...)
	full = append(full, "--config", e.config)
	cmd := exec.CommandContext(ctx, binaryPath(), full...)
	extra := []string{"HRSYNC_API_TOKEN=" + e2eToken}
	if e.storeKind == storePostgres {
		extra = append(extra, "HRSYNC_STORE_URL="+e.pgURL)
	}
	cmd.Env = childEnv(extra...)
	cmd.Dir = e.dir
	return cmd
}

// childEnv is the parent's environment without any HRSYNC_ variable, plus extra.
func childEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HRSYNC_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// run runs the binary to its end and returns its exit code and output.
func (e *env) run(args ...string) result {
	e.t.Helper()
	res := e.runNoFatal(args...)
	if res.code < 0 {
		e.t.Fatalf("run hrsync %s: %s", strings.Join(args, " "), res)
	}
	return res
}

// runNoFatal runs the binary like run, but reports a failure to start or a
// run past commandTimeout as exit code -1; it may be called from any goroutine.
func (e *env) runNoFatal(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return runExec(e.command(ctx, args...))
}

// runExec runs cmd to its end and returns its exit code and output; a
// failure to start, or an end by a signal (a timeout), is exit code -1 with
// the error appended to stderr.
func runExec(cmd *exec.Cmd) result {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		res.code = exit.ExitCode()
	default:
		res.code = -1
		res.stderr += "\n" + err.Error()
	}
	return res
}

// mustRun runs the binary and fails the test unless it exits with want.
func (e *env) mustRun(want int, args ...string) result {
	e.t.Helper()
	res := e.run(args...)
	if res.code != want {
		e.t.Fatalf("hrsync %s: want exit %d, got %s", strings.Join(args, " "), want, res)
	}
	return res
}

// drop writes an export into the drop folder, ready at once.
func (e *env) dropFile(name string, content []byte) string {
	e.t.Helper()
	path := filepath.Join(e.drop, name)
	tmp := path + ".partial" // not matched by *.csv while written
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// archived lists the file names in the drop folder's processed/ or failed/.
func (e *env) archived(outcome string) []string {
	e.t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.drop, outcome))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

// exportReport is the part of an archived file's report the tests read.
type exportReport struct {
	Outcome    string         `json:"outcome"`
	Duplicate  bool           `json:"duplicate"`
	Counts     map[string]int `json:"counts"`
	Safeguards []struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"safeguards"`
	Rejections []struct {
		Source string `json:"source"`
		Line   int    `json:"line"`
		Field  string `json:"field"`
		Reason string `json:"reason"`
	} `json:"rejections"`
	Error string `json:"error"`
}

// report reads the report archived beside a file in processed/ or failed/,
// and checks its mode: reports.mode's default, 0640 (the owner and an HR
// group read it; others cannot).
func (e *env) report(outcome, name string) exportReport {
	e.t.Helper()
	path := filepath.Join(e.drop, outcome, name+".report.json")
	fi, err := os.Stat(path)
	if err != nil {
		e.t.Fatalf("report of %s in %s/: %v (archived: %v)", name, outcome, err, e.archived(outcome))
	}
	if !e.noFileModes && fi.Mode().Perm() != 0o640 {
		e.t.Errorf("report %s has mode %v, want 0640 (reports.mode's default)", name, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	var r exportReport
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("decode report %s: %v", path, err)
	}
	return r
}

// person is one fictional employee of a generated export.
type person struct {
	id, email, first, last, dept, loc, start, birth string
	// balance is the export's addBalance; "" means the column is empty.
	balance string
}

// genPerson is the deterministic fictional person number i.
func genPerson(i int) person {
	firstNames := [...]string{"Ada", "Bruno", "Chiara", "Dmitri", "Esi", "Farid", "Greta", "Hiro", "Ines", "Jonas"}
	lastNames := [...]string{"Testwell", "Samplesen", "Mockridge", "Fakhouri", "Placeholt", "Dummont", "Exampleby"}
	depts := [...]string{"Engineering", "Sales", "Finance", "People", "Support"}
	locs := [...]string{"Lisbon", "Austin", "Nairobi", "Osaka", "Tallinn"}
	p := person{
		id:    fmt.Sprintf("P%05d", i),
		email: fmt.Sprintf("p%05d@example.test", i),
		first: firstNames[i%len(firstNames)],
		last:  lastNames[i%len(lastNames)],
		dept:  depts[i%len(depts)],
		loc:   locs[i%len(locs)],
		start: time.Date(2018+i%7, time.Month(1+i%12), 1+i%28, 0, 0, 0, 0, time.UTC).Format(time.DateOnly),
		birth: time.Date(1960+i%40, time.Month(1+(i/3)%12), 1+(i/7)%28, 0, 0, 0, 0, time.UTC).Format(time.DateOnly),
	}
	if i%5 != 0 {
		p.balance = strconv.Itoa(10 * (1 + i%4)) // 10..40; every fifth takes the default
	}
	return p
}

// genPeople are the people numbered from..to-1.
func genPeople(from, to int) []person {
	out := make([]person, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, genPerson(i))
	}
	return out
}

// wantBalance is what a new person is granted: the export's addBalance or
// the configuration's defaultBalance (25).
func (p person) wantBalance() float64 {
	if p.balance == "" {
		return 25
	}
	v, err := strconv.ParseFloat(p.balance, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// csvExport renders people as an export with the default column names.
func csvExport(people []person) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"externalId", "email", "firstName", "lastName", "department", "location", "startDate", "birthDate", "addBalance"})
	for _, p := range people {
		_ = w.Write([]string{p.id, p.email, p.first, p.last, p.dept, p.loc, p.start, p.birth, p.balance})
	}
	w.Flush()
	return buf.Bytes()
}

// emulatorProc is the emulator running as a process of its own.
type emulatorProc struct {
	url    string
	cmd    *exec.Cmd
	client *http.Client
}

// startEmulator starts `hrsync emulator` on a free loopback port, with
// extraFlags after the defaults, and stops it when the test ends. A missing emulator command fails the test.
func startEmulator(t *testing.T, extraFlags ...string) *emulatorProc {
	t.Helper()
	cmd := exec.Command(binaryPath(), append([]string{"emulator", "--listen", "127.0.0.1:0", "--token", e2eToken,
		"--personalize-delay", "1ms", "--log-requests=false"}, extraFlags...)...) // a later flag overrides
	cmd.Env = childEnv()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the emulator: %v", err)
	}
	_ = pw.Close()
	urls := make(chan string, 1)
	lines := make(chan []string, 1)
	go func() {
		// Reads the emulator's output until it exits (the cleanup below
		// stops it), so that it never blocks on a full pipe.
		defer pr.Close()
		var head []string
		found := false
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !found {
				if _, after, ok := strings.Cut(line, "emulator listening on "); ok {
					found = true
					urls <- strings.Trim(strings.Fields(after)[0], `"`)
					continue
				}
				if len(head) < 20 {
					head = append(head, line)
				}
			}
		}
		if !found {
			lines <- head
		}
	}()
	emu := &emulatorProc{cmd: cmd, client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case emu.url = <-urls:
	case head := <-lines:
		t.Fatalf("the emulator exited without listening (is `hrsync emulator` built in?):\n%s", strings.Join(head, "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("the emulator did not say where it listens within 30s")
	}
	return emu
}

// do sends one request to a test endpoint and decodes its JSON answer into out.
func (m *emulatorProc) do(t *testing.T, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, m.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode answer: %v", method, path, err)
		}
	}
}

// dataset is the part of GET /_emulator/dataset the tests use.
type dataset struct {
	CompanyID   string `json:"companyId"`
	Collections []struct {
		ID             string `json:"id"`
		Personalizable bool   `json:"personalizable"`
	} `json:"collections"`
}

func (m *emulatorProc) dataset(t *testing.T) dataset {
	t.Helper()
	var ds dataset
	m.do(t, http.MethodGet, "/_emulator/dataset", nil, &ds)
	return ds
}

// emuGrant is one balance a person received at the emulator.
type emuGrant struct {
	Source         string  `json:"source"`
	Amount         float64 `json:"amount"`
	IdempotencyKey string  `json:"idempotencyKey"`
}

// emuPerson is a person as the emulator holds them.
type emuPerson struct {
	ID         string     `json:"id"`
	ExternalID string     `json:"externalId"`
	Email      string     `json:"email"`
	Department string     `json:"department"`
	Balance    float64    `json:"balance"`
	Grants     []emuGrant `json:"grants"`
}

// people returns the company's people at the emulator whose externalId
// starts with "P" (the generated ones; the built-in dataset's are left out),
// in the emulator's order.
func (m *emulatorProc) people(t *testing.T, company string) []emuPerson {
	t.Helper()
	var st struct {
		Companies []struct {
			ID     string      `json:"id"`
			People []emuPerson `json:"people"`
		} `json:"companies"`
	}
	m.do(t, http.MethodGet, "/_emulator/state?companyId="+company, nil, &st)
	var out []emuPerson
	for _, c := range st.Companies {
		if c.ID != company {
			continue
		}
		for _, p := range c.People {
			if strings.HasPrefix(p.ExternalID, "P") {
				out = append(out, p)
			}
		}
	}
	return out
}

// request is one entry of the emulator's request log.
type request struct {
	// Time is when the emulator began to handle the request.
	Time           time.Time `json:"time"`
	OperationID    string    `json:"operationId"`
	Status         int       `json:"status"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Fault          string    `json:"fault"`
	Dropped        bool      `json:"dropped"`
}

func (m *emulatorProc) requests(t *testing.T) []request {
	t.Helper()
	var log []request
	m.do(t, http.MethodGet, "/_emulator/requests", nil, &log)
	return log
}

// countOp counts the logged calls of one operation.
func countOp(log []request, op string) int {
	n := 0
	for _, r := range log {
		if r.OperationID == op {
			n++
		}
	}
	return n
}

func (m *emulatorProc) clearRequests(t *testing.T) {
	t.Helper()
	m.do(t, http.MethodDelete, "/_emulator/requests", nil, nil)
}

// fault is a fault to inject, as POST /_emulator/faults takes it.
type fault struct {
	Operation string `json:"operation"`
	When      string `json:"when,omitempty"`
	Status    int    `json:"status,omitempty"`
	// RetryAfter, when not nil, is sent as the Retry-After header (seconds).
	RetryAfter *int    `json:"retryAfter,omitempty"`
	Latency    string  `json:"latency,omitempty"`
	Drop       bool    `json:"drop,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	Count      int     `json:"count,omitempty"`
}

func (m *emulatorProc) addFault(t *testing.T, f fault) {
	t.Helper()
	m.do(t, http.MethodPost, "/_emulator/faults", f, nil)
}

func (m *emulatorProc) clearFaults(t *testing.T) {
	t.Helper()
	m.do(t, http.MethodDelete, "/_emulator/faults", nil, nil)
}

// byExternalID indexes people by externalId and fails the test when one
// appears twice.
func byExternalID(t *testing.T, people []emuPerson) map[string]emuPerson {
	t.Helper()
	out := make(map[string]emuPerson, len(people))
	for _, p := range people {
		if _, dup := out[p.ExternalID]; dup {
			t.Errorf("person %s exists twice at the emulator", p.ExternalID)
		}
		out[p.ExternalID] = p
	}
	return out
}

// ledgerGrant is a grant as `hrsync grants list --json` prints it.
type ledgerGrant struct {
	Key        string
	ExternalID string
	Amount     float64
	State      string
}

// grants lists the ledger's grants in the given states; with none, the
// held ones (the command's default: unknown and pending).
func (e *env) grants(states ...string) []ledgerGrant {
	e.t.Helper()
	args := []string{"grants", "list", "--json"}
	if len(states) > 0 {
		args = append(args, "--state", strings.Join(states, ","))
	}
	res := e.mustRun(0, args...)
	var out []ledgerGrant
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		e.t.Fatalf("decode grants list: %v\n%s", err, res)
	}
	return out
}

// waitFor polls cond every few milliseconds until it holds or the bound
// passes; it tells whether cond held.
func waitFor(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stateDB opens the worker's state for checks made while no worker runs:
// the SQLite file read only, or on PostgreSQL the test's schema (as the
// search_path of every connection, with no idle connection kept). It is
// closed when the test ends. Queries written with ? placeholders go
// through e.rebind first.
func (e *env) stateDB() *sql.DB {
	e.t.Helper()
	db, err := e.openState()
	if err != nil {
		e.t.Fatalf("open the worker's state: %v", err)
	}
	e.t.Cleanup(func() { _ = db.Close() })
	return db
}

func (e *env) openState() (*sql.DB, error) {
	if e.storeKind != storePostgres {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "state.db")+"?mode=ro")
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		return db, nil
	}
	cfg, err := pq.NewConfig(e.pgURL)
	if err != nil {
		return nil, errors.New("parse the postgres url") // pq's error may quote it
	}
	if cfg.Runtime == nil {
		cfg.Runtime = map[string]string{}
	}
	cfg.Runtime["search_path"] = pq.QuoteIdentifier(e.schema)
	conn, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres connector: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(0) // many checks per test: hold no connection between them
	return db, nil
}

// rebind turns a query's ? placeholders into the store's own.
func (e *env) rebind(query string) string {
	if e.storeKind == storePostgres {
		return sqlx.Rebind(sqlx.DOLLAR, query)
	}
	return query
}

// count runs a SELECT COUNT(*) on the worker's state; the query takes ?
// placeholders on either store.
func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.stateDB().QueryRowContext(e.t.Context(), e.rebind(query), args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}
