package scrape

import (
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
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
	if code != 200 || !strings.Contains(body, "reaper_processes 42") || !strings.Contains(body, "\nprocess_cpu_seconds_total ") {
		t.Errorf("/metrics: %d, want the published series and the process's own:\n%s", code, body)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "windows" {
		if !strings.Contains(body, "\nprocess_resident_memory_bytes ") || !strings.Contains(body, "\nprocess_start_time_seconds ") {
			t.Errorf("/metrics: no resident memory or start time of the process's own:\n%s", body)
		}
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

// serve starts s and ends it with the test.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s.Addr()
}

// hold opens n connections to addr that never send a request (a client
// that holds what it opened), closed with the test.
func hold(t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
}

// waitHeld waits until s has accepted what was opened: its count stops
// growing past want, or reaches it.
func waitHeld(t *testing.T, s *Server, atLeast int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n := s.Held(); n >= atLeast || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConnectionsBounded: 300 connections that send nothing leave the
// endpoint holding at most MaxConns (each one a descriptor of the
// watch's), and a scrape that comes after them is answered at once. The
// control: the same listener with no bound holds all 300 — the count
// the check reads can grow.
func TestConnectionsBounded(t *testing.T) {
	const n = 300
	t.Run("control: no bound", func(t *testing.T) {
		s, err := Listen("127.0.0.1:0", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s.ln.max = 1 << 20
		addr := serve(t, s)
		hold(t, addr, n)
		if got := waitHeld(t, s, n); got < n {
			t.Fatalf("unbounded, the endpoint holds %d of %d connections: the count proves nothing", got, n)
		}
	})
	s, err := Listen("127.0.0.1:0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, s)
	hold(t, addr, n)
	// Every connection accepted: the listener's backlog is empty when a
	// new one is accepted right after.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := s.Held(); got > MaxConns {
		t.Errorf("after %d idle connections the endpoint holds %d, want at most %d", n, got, MaxConns)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("a scrape after %d held connections: %v", n, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
	if !resp.Close {
		t.Error("the answer keeps its connection alive: want Connection: close")
	}
}

// TestToken: with a token, /metrics answers 401 to a scrape without it
// or with another, 200 with it; /healthz answers everyone.
func TestToken(t *testing.T) {
	s, err := ListenWith("127.0.0.1:0", Options{Limit: time.Minute, Token: []byte("s3cret")})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serve(t, s)
	s.Publish([]byte("# HELP reaper_processes P.\n# TYPE reaper_processes gauge\nreaper_processes 1\n"), time.Now())
	for _, tt := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer other", 401}, {"Basic czNjcmV0", 401}, {"Bearer s3cret", 200}} {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want || tt.want == 401 && strings.Contains(string(b), "reaper_processes") {
			t.Errorf("Authorization %q: %d, want %d\n%s", tt.auth, resp.StatusCode, tt.want, b)
		}
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz without the token: %d, want 200", code)
	}
}

// TestBodyBounded: a pass's text past MaxBody is served cut at a line,
// with a comment saying how much was left out.
func TestBodyBounded(t *testing.T) {
	s, err := Listen("127.0.0.1:0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serve(t, s)
	line := "reaper_processes 1\n"
	text := "# HELP reaper_processes P.\n# TYPE reaper_processes gauge\n" + strings.Repeat(line, MaxBody/len(line)+100)
	s.Publish([]byte(text), time.Now())
	_, body := get(t, base+"/metrics")
	if len(body) > MaxBody+64<<10 {
		t.Errorf("/metrics is %d bytes for a text of %d: want at most MaxBody and the process's own", len(body), len(text))
	}
	if !strings.Contains(body, "bytes of this pass's series left out") {
		t.Error("the cut is not said")
	}
	if s.text == nil || len(s.text) != len(text) {
		t.Error("serving changed the published text")
	}
}

func TestLoopbackDefault(t *testing.T) {
	for in, want := range map[string]string{"9469": "127.0.0.1:9469", ":9469": "127.0.0.1:9469", "0.0.0.0:9469": "0.0.0.0:9469", "[::1]:1": "[::1]:1", "10.0.0.2:80": "10.0.0.2:80"} {
		if got := LoopbackDefault(in); got != want {
			t.Errorf("LoopbackDefault(%q) = %q, want %q", in, got, want)
		}
	}
}
