package main_test

// Helpers that render a report in headless Chromium (Debian's chromium
// package) for the tests that read it as an HR admin would.

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumEnv names the variable that gives the Chromium binary; by
// default /usr/bin/chromium, then chromium on PATH.
const chromiumEnv = "HRSYNC_TEST_CHROMIUM"

// screenshotEnv names a folder the report screenshots are written to; by
// default the test's temporary folder.
const screenshotEnv = "HRSYNC_TEST_SCREENSHOTS"

// chromiumPath finds Chromium, failing the test when it is missing.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv(chromiumEnv), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatalf("the HTML report tests need Chromium: install the Debian packages chromium and chromium-driver, or set %s", chromiumEnv)
	return ""
}

// chromium runs headless Chromium with a fresh profile and no network
// beyond the page, with the given arguments, and returns its stdout.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromiumPath(t), append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

var (
	headPart = regexp.MustCompile(`(?s)<head>.*</head>`)
	tag      = regexp.MustCompile(`<[^>]*>`)
	spaces   = regexp.MustCompile(`\s+`)
)

// visibleText renders the page in Chromium and returns the text of its
// body as the DOM holds it after rendering: tags, styles and the head
// removed, entities decoded, white space collapsed.
func visibleText(t *testing.T, page string) string {
	t.Helper()
	dom := string(chromium(t, "--dump-dom", "file://"+page))
	if !strings.Contains(dom, "<body") {
		t.Fatalf("chromium rendered no body for %s:\n%.500s", page, dom)
	}
	text := tag.ReplaceAllString(headPart.ReplaceAllString(dom, " "), " ")
	return strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(text), " "))
}

// screenshot renders the page in Chromium into a PNG in the folder
// screenshotEnv names (or the test's temporary folder), checks that it
// is a PNG, and returns its path.
func screenshot(t *testing.T, page, name string) string {
	t.Helper()
	dir := os.Getenv(screenshotEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	out, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(out)
	chromium(t, "--hide-scrollbars", "--window-size=1100,1400", "--screenshot="+out, "file://"+page)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no screenshot written: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 10_000 {
		t.Fatalf("the screenshot %s is not a rendered PNG (%d bytes)", out, len(b))
	}
	t.Logf("screenshot of %s: %s", filepath.Base(page), out)
	return out
}
