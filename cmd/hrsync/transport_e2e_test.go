package main_test

import (
	"strings"
	"testing"
)

// TestE2EPlainHTTPRefused checks that a plain http:// base URL to a host
// that is not loopback is a configuration error before any connection
// (the token would cross the network in clear), and that the explicit
// api.allowInsecureHTTP lets it through with a warning at start. The host
// name ends in .invalid, which never resolves: nothing can be reached even
// if the check were missing.
func TestE2EPlainHTTPRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	e.dropFile("a.csv", csvExport(genPeople(1, 4)))
	insecure := []string{"HRSYNC_API_BASE_URL=http://hr-platform.invalid:8080"}
	for _, args := range [][]string{{"run", "people"}, {"config", "check"}} {
		res := e.runEnv(insecure, args...)
		if res.code != 2 || !strings.Contains(res.stderr, "api.baseUrl") || !strings.Contains(res.stderr, "in clear") {
			t.Errorf("hrsync %s with a plain http URL: want exit 2 naming api.baseUrl: %s", strings.Join(args, " "), res)
		}
	}
	if got := countOp(e.emu.requests(t), "createPeople"); got != 0 {
		t.Errorf("%d createPeople calls", got)
	}
	e.editConfig("api:\n", "api:\n  allowInsecureHTTP: true\n")
	res := e.runEnv(insecure, "config", "check")
	if res.code != 0 || !strings.Contains(res.stdout, "WARNING: api.allowInsecureHTTP") {
		t.Errorf("config check with api.allowInsecureHTTP: want exit 0 and a warning: %s", res)
	}
	res = e.runEnv(insecure, "status")
	if res.code != 0 || !strings.Contains(res.stderr, "sent in clear") || !strings.Contains(res.stderr, `"level":"warn"`) {
		t.Errorf("status with api.allowInsecureHTTP: want exit 0 and a warning log line: %s", res)
	}
}
