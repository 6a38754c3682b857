package scrape

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The endpoint serves what was published, in the text format, beside the
// process's own series; /healthz is 200 for a fresh pass and 503 for one
// older than the limit (and before any pass, once the start is).
func TestServer(t *testing.T) {
	s, err := Listen("127.0.0.1:0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + s.Addr()

	if code, body := get(t, base+"/healthz"); code != 200 || !strings.HasPrefix(body, "starting") {
		t.Errorf("before a pass: %d %q, want 200 starting", code, body)
	}
	if _, body := get(t, base+"/metrics"); strings.Contains(body, "reaper_") || !strings.Contains(body, "go_goroutines") {
		t.Errorf("before a pass, /metrics: want the process's own series alone:\n%s", body)
	}
	text := "# HELP reaper_processes Processes.\n# TYPE reaper_processes gauge\nreaper_processes 42\n"
	s.Publish([]byte(text), time.Now())
	code, body := get(t, base+"/metrics")
	if code != 200 || !strings.Contains(body, "reaper_processes 42") || !strings.Contains(body, "process_resident_memory_bytes") {
		t.Errorf("/metrics: %d, want the published series and the process's own:\n%s", code, body)
	}
	// The text format, line by line: a comment, or a sample — a name,
	// labels perhaps, a value — and each family's TYPE said once.
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? [-+0-9.eEInfa]+$`)
	typed, described := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if help, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(help, " ")
			described[name] = text != ""
		}
		if m := sample.FindStringSubmatch(line); m != nil && !described[m[1]] {
			t.Errorf("/metrics: %s has no HELP text before its first sample", m[1])
			described[m[1]] = true // once
		}
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(name, " ")
			if typed[name] {
				t.Errorf("/metrics: %s typed twice", name)
			}
			typed[name] = true
		}
		if !strings.HasPrefix(line, "# ") && !sample.MatchString(line) {
			t.Errorf("/metrics: %q is not a line of the text format", line)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(body)
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else {
		t.Log("no promtool here: .ci/run installs it")
	}
	if resp, err := http.Post(base+"/metrics", "text/plain", nil); err != nil || resp.StatusCode != 405 {
		t.Errorf("POST /metrics: %v %v, want 405", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.HasPrefix(body, "ok") {
		t.Errorf("a fresh pass: %d %q, want 200 ok", code, body)
	}
	s.Publish([]byte(text), time.Now().Add(-time.Hour))
	if code, body := get(t, base+"/healthz"); code != 503 || !strings.Contains(body, "ago") {
		t.Errorf("a pass an hour old: %d %q, want 503", code, body)
	}
	if code, _ := get(t, base+"/nowhere"); code != 404 {
		t.Errorf("/nowhere: %d, want 404", code)
	}
}
