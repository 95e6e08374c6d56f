package emulator

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseToken(t *testing.T) {
	cases := []struct {
		in        string
		token     string
		companies []string
		bad       bool
	}{
		{in: "demo-token", token: "demo-token"},
		{in: " t1=companyA, companyB ", token: "t1", companies: []string{"companyA", "companyB"}},
		{in: "", bad: true},
		{in: "=a", bad: true},
		{in: "t=", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			tok, companies, err := ParseToken(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("accepted %q", c.in)
				}
				return
			}
			if err != nil || tok != c.token || strings.Join(companies, ",") != strings.Join(c.companies, ",") {
				t.Errorf("ParseToken(%q) = %q %v %v", c.in, tok, companies, err)
			}
		})
	}
}

func TestParseDelayRange(t *testing.T) {
	cases := []struct {
		in   string
		want DelayRange
		bad  bool
	}{
		{in: "1s", want: DelayRange{time.Second, time.Second}},
		{in: "15s-20s", want: DelayRange{15 * time.Second, 20 * time.Second}},
		{in: "0", want: DelayRange{}},
		{in: "250ms - 1s", want: DelayRange{250 * time.Millisecond, time.Second}},
		{in: "20s-15s", bad: true},
		{in: "-1s", bad: true},
		{in: "soon", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseDelayRange(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("accepted %q as %v", c.in, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("ParseDelayRange(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
}

// TestServe starts the server on port 0, reads the printed address, calls
// it, and checks that cancelling the context shuts it down without error
// while a personalize call may be waiting through a five-minute delay
// (were that call not released, Shutdown would time out and Serve fail).
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{
			Listen: "127.0.0.1:0",
			Out:    pw,
			Options: Options{
				Tokens:           map[string][]string{"demo-token": nil},
				PersonalizeDelay: &DelayRange{Min: 5 * time.Minute, Max: 5 * time.Minute},
			},
		})
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[0] != "emulator" || !strings.HasPrefix(fields[3], "http://127.0.0.1:") ||
		!strings.Contains(line, "company="+DatasetCompanyID) || strings.Contains(line, "demo-token") {
		t.Fatalf("line %q", line)
	}
	base := fields[3]
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/ext/v1/collection/"+PlainCollectionID+"/product/"+NotebookProductID, nil)
	req.Header.Set("Authorization", "Bearer demo-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}

	waiting := make(chan int, 1)
	go func() {
		body := `{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":"A"}}`
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/ext/v1/collection/"+PersonalizableCollectionID+"/personalize", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer demo-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			waiting <- 0
			return
		}
		_ = resp.Body.Close()
		waiting <- resp.StatusCode
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if status := <-waiting; status != 0 && status != http.StatusServiceUnavailable {
		t.Errorf("the waiting call got %d, want 503 or a closed connection", status)
	}
}
