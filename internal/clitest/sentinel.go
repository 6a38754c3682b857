//go:build linux

package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Tests that run `reaper reap` for real run as root on a machine that runs
// other work. A test rule such as when = ["reparented"], kind = ["mcp"]
// alone would reap every orphaned MCP server on the host. So every rule of
// every test policy is confined to the processes this test binary started:
// markRules adds env = ['REAPER_TEST_RUN=^<mark>$'], a value set once per
// run of the suite and inherited by every helper, shell and gateway the
// tests start (and by nothing else).
const EnvMark = "REAPER_TEST_RUN"

// Mark is this run's value of REAPER_TEST_RUN.
var Mark string

// SetMark sets the suite's mark in its own environment, for its children.
func SetMark() {
	if v := os.Getenv(EnvMark); v != "" {
		Mark = v // a helper re-executed by the suite
		return
	}
	Mark = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	os.Setenv(EnvMark, Mark)
}

// MarkRules confines every [[rule]] of a test policy to this suite's
// processes.
func MarkRules(policy string) string {
	if strings.Contains(policy, "\nenv =") {
		panic("markRules: a test policy sets env itself; confine it by hand")
	}
	line := fmt.Sprintf("env = ['%s=^%s$']", EnvMark, Mark)
	return strings.ReplaceAll(policy, "[[rule]]\n", "[[rule]]\n"+line+"\n")
}

// sentinel is an orphan started outside every test's trees, shaped like
// what the test policies reap (an ACP runtime, an MCP server, a PTY shell)
// and without the suite's mark. The suite fails if any of them is not
// alive after every test has run.
type sentinel struct {
	pid   int
	start uint64
	what  string
}

var sentinels []sentinel

// StartSentinels makes the suite a subreaper (the tests make it one anyway,
// and the policies name it) and leaves it one orphan per kind: an ACP
// runtime and an MCP server in sessions of their own, and a shell that
// leads a session on a pseudo-terminal whose master is gone. It runs
// before the suite's mark is set, so none of them carries it.
func StartSentinels() error {
	if os.Geteuid() != 0 {
		return nil // the reaping tests skip without root
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "reaper-sentinel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	spec := SpawnSpec{Args: []string{"sentinel-parent"}, Lifetime: 30 * time.Minute, Children: []SpawnSpec{
		{Args: []string{"claude-agent-acp", "--sentinel"}, Setsid: true},
		{Args: []string{"npm", "exec", "mcp-remote", "https://sentinel.test"}, Setsid: true},
		{Args: []string{"-bash"}, PTY: true},
	}}
	raw, _ := json.Marshal(spec)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	parent := exec.Command(self)
	parent.Args = spec.Args
	parent.Env = append(os.Environ(), EnvSpec+"="+string(raw), EnvPIDDir+"="+dir)
	if err := parent.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	var pids []string
	for len(pids) < 4 {
		if time.Now().After(deadline) {
			parent.Process.Kill()
			parent.Wait()
			return fmt.Errorf("%d of 4 sentinel processes registered", len(pids))
		}
		time.Sleep(10 * time.Millisecond)
		pids, _ = filepath.Glob(filepath.Join(dir, "[0-9]*"))
	}
	// Their parent dies: they are orphans of this process now.
	parent.Process.Kill()
	parent.Wait()
	for _, f := range pids {
		pid, _ := strconv.Atoi(filepath.Base(f))
		if pid == parent.Process.Pid {
			continue
		}
		b, _ := os.ReadFile(f)
		start, _ := strconv.ParseUint(string(b), 10, 64)
		for ParentOf(pid) != os.Getpid() {
			if time.Now().After(deadline) {
				return fmt.Errorf("sentinel %d was not adopted", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
		sentinels = append(sentinels, sentinel{pid, start, CmdlineOf(pid)})
	}
	return nil
}

// CheckSentinels reports the sentinels that died during the suite, then
// ends every one of them (by pid, through a verified handle).
func CheckSentinels() []string {
	var dead []string
	for _, s := range sentinels {
		if now, ok := StartTicks(s.pid); !ok || now != s.start {
			dead = append(dead, fmt.Sprintf("%s (pid %d)", s.what, s.pid))
		}
		KillTreeVerified(s.pid)
	}
	if len(sentinels) > 0 && len(dead) == 0 {
		fmt.Fprintf(os.Stderr, "sentinels: %d unmarked orphans (acp, mcp, pty) alive after every test\n", len(sentinels))
	}
	return dead
}

// EndLeftHelpers ends what the suite's tests left running under it — the
// suite is every orphan's subreaper as root (startSentinels) — and names
// each on stderr: a helper outlives its test only by a cleanup's miss,
// and none may outlive the suite.
func EndLeftHelpers() {
	var left []string
	for _, pid := range DescendantsOf(os.Getpid()) {
		if st := StateOf(pid); st == "" || st == "Z" {
			continue // exited: the suite's own exit lets init reap it
		}
		left = append(left, fmt.Sprintf("%d %q", pid, CmdlineOf(pid)))
		KillTreeVerified(pid)
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "the suite ended %d processes its tests left running: %s\n", len(left), strings.Join(left, ", "))
	}
}

// IsSentinel reports whether pid is one of the suite's sentinels.
func IsSentinel(pid int) bool {
	for _, s := range sentinels {
		if s.pid == pid {
			return true
		}
	}
	return false
}
