//go:build linux

package clitest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// LockedBuffer is an output a running process writes while the test reads.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Watching is a `reaper watch` the test runs.
type Watching struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *LockedBuffer
	Lock           string
}

// StartWatch runs `reaper watch` with the policy at pol and args, and
// waits for its first pass (the seen file beside its lock); it is ended
// when the test ends.
func StartWatch(t *testing.T, pol string, args ...string) *Watching {
	t.Helper()
	return StartWatchEnv(t, nil, pol, args...)
}

// StartWatchEnv is startWatch with env added to the watch's environment.
func StartWatchEnv(t *testing.T, env []string, pol string, args ...string) *Watching {
	t.Helper()
	return StartWatchIn(t, nil, env, pol, args...)
}

// StartWatchIn is startWatchEnv with the watch run by wrapper (a
// command that execs the rest of its arguments: prlimit, nice).
func StartWatchIn(t *testing.T, wrapper, env []string, pol string, args ...string) *Watching {
	t.Helper()
	w := &Watching{Stdout: &LockedBuffer{}, Stderr: &LockedBuffer{}, Lock: filepath.Join(t.TempDir(), "reaper.lock")}
	argv := append(append(wrapper[:len(wrapper):len(wrapper)], Bin, "watch", "--policy", pol, "--lock-file", w.Lock, "--journal", "off"), args...)
	w.Cmd = exec.Command(argv[0], argv[1:]...)
	w.Cmd.Stdout, w.Cmd.Stderr = w.Stdout, w.Stderr
	if env != nil {
		w.Cmd.Env = append(os.Environ(), env...)
	}
	if err := w.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Cmd.Process.Kill()
		w.Cmd.Wait()
	})
	WaitFor(t, func() bool {
		_, err := os.Stat(strings.TrimSuffix(w.Lock, ".lock") + ".seen")
		return err == nil
	}, "the watch's first pass")
	return w
}

// Announced is the metrics address a watch said on its stderr.
var Announced = regexp.MustCompile(`metrics at (http://[^ ]+/metrics), health at (http://[^ ]+/healthz)`)

// ScrapeOnce GETs url: its status and body.
func ScrapeOnce(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var HeartbeatLine = regexp.MustCompile(`(?m)^reaper_watch_heartbeat_timestamp_seconds (\S+)$`)

// Heartbeat is the Heartbeat gauge of a scrape (0: none).
func Heartbeat(body string) float64 {
	m := HeartbeatLine.FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	return f
}
