package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// orphanUnmarked starts argv0 (a bash sleeping, under that name) as an
// orphan of this process, without the suite's mark in its environment.
// It returns its pid once the intermediate shell is gone.
func orphanUnmarked(argv0 string) (int, error) {
	dir, err := os.MkdirTemp("", "reaper-orphan-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	pidfile := filepath.Join(dir, "pid")
	inner := fmt.Sprintf("exec -a %q bash -c 'sleep 600; exit 0'", argv0)
	outer := exec.Command("bash", "-c", fmt.Sprintf("(%s) </dev/null >/dev/null 2>&1 & echo $! > %q", inner, pidfile))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, clitest.EnvMark+"=") {
			outer.Env = append(outer.Env, kv)
		}
	}
	if out, err := outer.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(5 * time.Second)
	for clitest.ParentOf(pid) != os.Getpid() || !strings.HasPrefix(clitest.CmdlineOf(pid), argv0) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("pid %d was not adopted by this process", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return pid, nil
}

// The negative control of the sentinels: in a PID namespace of its own,
// where nothing else can be hit, the same test rule without the mark
// reaps an unmarked orphan, and with the mark leaves it alone. So the
// mark is what protects the host's orphans, and the sentinel check above
// can fail.
func TestUnconfinedPolicyReapsUnmarkedOrphan(t *testing.T) {
	clitest.RequireRoot(t)
	var got struct{ MarkedAlive, UnmarkedKilled bool }
	out := inPIDNamespace(t, &got, envNSControl+"=1", envReaperBin+"="+clitest.Bin)
	if !got.MarkedAlive {
		t.Errorf("the marked policy reaped an unmarked orphan:\n%s", out)
	}
	if !got.UnmarkedKilled {
		t.Errorf("control: the unconfined policy left the unmarked orphan alive, so the sentinel check proves nothing:\n%s", out)
	}
}

const envNSControl = "REAPER_TEST_NSCONTROL"

// runNSControlHelper is PID 1 of a new PID and mount namespace with its
// own /proc: it adopts an unmarked orphan and runs the real reaper on it
// twice, with the marked test rule, then without the mark.
func runNSControlHelper() {
	ownProc()
	fail := nsFail
	pid, err := orphanUnmarked("npm exec mcp-remote https://control.test")
	if err != nil {
		fail("orphan: %v", err)
	}
	dir, err := os.MkdirTemp("", "reaper-nscontrol-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	rule := `version = 1
[defaults]
min_age = "0s"
grace = "1s"
[[rule]]
name = "orphaned-agent-trees"
when = ["reparented"]
kind = ["pty", "mcp", "acp"]
action = "terminate"
`
	reap := func(pol string) {
		path := filepath.Join(dir, "policy.toml")
		if err := os.WriteFile(path, []byte(pol), 0o644); err != nil {
			fail("%v", err)
		}
		c := exec.Command(os.Getenv(envReaperBin), "reap", "--policy", path, "--lock-file", filepath.Join(dir, "lock"), "--journal", "off")
		out, _ := c.CombinedOutput()
		fmt.Fprintf(os.Stderr, "%s\n", out)
	}
	alive := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err == nil && !strings.Contains(string(b), ") Z ")
	}
	var res struct{ MarkedAlive, UnmarkedKilled bool }
	reap(clitest.MarkRules(rule))
	res.MarkedAlive = alive()
	reap(rule)
	deadline := time.Now().Add(5 * time.Second)
	for alive() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	res.UnmarkedKilled = !alive()
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}
