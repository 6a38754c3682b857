package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// checkEndpoint scrapes the endpoint a watch announced on stderr: the
// metrics pass promtool check metrics (where promtool is installed),
// carry the textfile's series and a heartbeat that advances between two
// passes, and /healthz says 200.
func checkEndpoint(t *testing.T, stderr func() string) {
	t.Helper()
	var m []string
	clitest.WaitFor(t, func() bool { m = clitest.Announced.FindStringSubmatch(stderr()); return m != nil }, "the endpoint's address on stderr")
	var first string
	clitest.WaitFor(t, func() bool { _, first = clitest.ScrapeOnce(t, m[1]); return clitest.Heartbeat(first) > 0 }, "a first pass's metrics")
	for _, series := range []string{"reaper_finding_processes ", "reaper_processes ", "reaper_last_success_timestamp_seconds ", "reaper_watch_passes_total", "reaper_zombies ", "reaper_fork_storms_total ", "go_goroutines "} {
		if !strings.Contains(first, series) {
			t.Errorf("/metrics lacks %s:\n%s", series, first)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(first)
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else {
		t.Log("no promtool here: the format is checked in CI (.ci/run installs it)")
	}
	was := clitest.Heartbeat(first)
	clitest.WaitFor(t, func() bool { _, body := clitest.ScrapeOnce(t, m[1]); return clitest.Heartbeat(body) > was }, "the heartbeat to advance with the next pass")
	if code, body := clitest.ScrapeOnce(t, m[2]); code != http.StatusOK || !strings.HasPrefix(body, "ok") {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
}

// TestMetricsEndpoint: reaper watch --metrics-listen 127.0.0.1:0 says
// where it serves, and serves the series with a heartbeat that advances
// on every pass. The control: without the flag, nothing is said and no
// endpoint.
func TestMetricsEndpoint(t *testing.T) {
	mark := fmt.Sprintf("scrape%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented"`, "")
	w := clitest.StartWatch(t, pol, "--backstop", "1s", "--metrics-listen", "127.0.0.1:0")
	checkEndpoint(t, w.Stderr.String)
	plain := clitest.StartWatch(t, pol, "--backstop", "1s")
	if clitest.Announced.MatchString(plain.Stderr.String()) {
		t.Errorf("a watch without --metrics-listen announced an endpoint:\n%s", plain.Stderr.String())
	}
}

// TestMetricsEndpointInit: the same from reaper run as PID 1 of a PID
// namespace, the endpoint served by its watch, its passes made by the
// adoptions of its command's orphans.
func TestMetricsEndpointInit(t *testing.T) {
	clitest.RequireRoot(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skips.Skip(t, "needs util-linux's unshare (apt-get install util-linux)")
	}
	mark := fmt.Sprintf("scrapeinit%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented"`, "")
	r := startRun(t, []string{unshare, "--pid", "--fork", "--mount-proc"}, "--policy", pol, "--lock-file", t.TempDir()+"/reaper.lock",
		"--metrics-listen", "127.0.0.1:0", "--",
		// Every second a child is orphaned and adopted by the init: a hint
		// to its watch, and a pass (its backstop is a minute).
		"sh", "-c", "while :; do (sleep 30 &); sleep 1; done")
	checkEndpoint(t, r.stderr.String)
}

// TestMetricsEndpointFlood: a watch whose open-file limit is 128 (a
// unit's LimitNOFILE, made small) serves its endpoint while 600
// connections that never send a request are held open against it: it
// holds a bounded number of descriptors, /healthz and /metrics answer, a
// killed owner's orphan is reaped by a hint's pass (as TestWatchOwnerDeath,
// whose control shows it lives on without the watch), and nothing in its
// log says too many open files.
func TestMetricsEndpointFlood(t *testing.T) {
	clitest.RequireRoot(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		skips.Skip(t, "needs util-linux's prlimit (apt-get install util-linux)")
	}
	clitest.BecomeSubreaper(t)
	mark := "scrape-flood-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
	owner, child := ownerWithChild(t, mark)
	w := clitest.StartWatchIn(t, []string{prlimit, "--nofile=128:128"}, nil, pol, "--backstop", "1m", "--metrics-listen", "127.0.0.1:0")
	var m []string
	clitest.WaitFor(t, func() bool { m = clitest.Announced.FindStringSubmatch(w.Stderr.String()); return m != nil }, "the endpoint's address on stderr")
	addr := strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/metrics")
	const flood = 600
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	if code, _ := clitest.ScrapeOnce(t, m[2]); code != http.StatusOK {
		t.Errorf("/healthz under %d held connections: %d", flood, code)
	}
	if code, body := clitest.ScrapeOnce(t, m[1]); code != http.StatusOK || !strings.Contains(body, "reaper_processes ") {
		t.Errorf("/metrics under %d held connections: %d", flood, code)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", w.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// The endpoint's MaxConns and the watch's own (pidfds, epoll,
	// inotify, the locks, stdio).
	if len(fds) > 64 {
		t.Errorf("the watch holds %d descriptors under %d held connections, want at most 64", len(fds), flood)
	}
	syscall.Kill(owner, syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(child) }, "the orphan reaped by the watch under the flood")
	if strings.Contains(w.Stderr.String(), "too many open files") {
		t.Errorf("the watch ran out of descriptors:\n%s", w.Stderr.String())
	}
	t.Logf("%d connections held: the watch holds %d descriptors; the orphan reaped", flood, len(fds))
}
