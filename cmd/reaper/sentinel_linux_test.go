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

	"golang.org/x/sys/unix"
)

// Tests that run `reaper reap` for real run as root on a machine that runs
// other work. A test rule such as when = ["reparented"], kind = ["mcp"]
// alone would reap every orphaned MCP server on the host. So every rule of
// every test policy is confined to the processes this test binary started:
// markRules adds env = ['REAPER_TEST_RUN=^<mark>$'], a value set once per
// run of the suite and inherited by every helper, shell and gateway the
// tests start (and by nothing else).
const envMark = "REAPER_TEST_RUN"

// suiteMark is this run's value of REAPER_TEST_RUN.
var suiteMark string

// setMark sets the suite's mark in its own environment, for its children.
func setMark() {
	if v := os.Getenv(envMark); v != "" {
		suiteMark = v // a helper re-executed by the suite
		return
	}
	suiteMark = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	os.Setenv(envMark, suiteMark)
}

// markRules confines every [[rule]] of a test policy to this suite's
// processes.
func markRules(policy string) string {
	if strings.Contains(policy, "\nenv =") {
		panic("markRules: a test policy sets env itself; confine it by hand")
	}
	line := fmt.Sprintf("env = ['%s=^%s$']", envMark, suiteMark)
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

// startSentinels makes the suite a subreaper (the tests make it one anyway,
// and the policies name it) and leaves it one orphan per kind: an ACP
// runtime and an MCP server in sessions of their own, and a shell that
// leads a session on a pseudo-terminal whose master is gone. It runs
// before the suite's mark is set, so none of them carries it.
func startSentinels() error {
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
	spec := spawnSpec{Args: []string{"sentinel-parent"}, Lifetime: 30 * time.Minute, Children: []spawnSpec{
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
	parent.Env = append(os.Environ(), envSpec+"="+string(raw), envPIDDir+"="+dir)
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
		for parentOf(pid) != os.Getpid() {
			if time.Now().After(deadline) {
				return fmt.Errorf("sentinel %d was not adopted", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
		sentinels = append(sentinels, sentinel{pid, start, cmdlineOf(pid)})
	}
	return nil
}

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
		if !strings.HasPrefix(kv, envMark+"=") {
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
	for parentOf(pid) != os.Getpid() || !strings.HasPrefix(cmdlineOf(pid), argv0) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("pid %d was not adopted by this process", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return pid, nil
}

// isSentinel reports whether pid is one of the suite's sentinels.
func isSentinel(pid int) bool {
	for _, s := range sentinels {
		if s.pid == pid {
			return true
		}
	}
	return false
}

// checkSentinels reports the sentinels that died during the suite, then
// ends every one of them (by pid, through a verified handle).
func checkSentinels() []string {
	var dead []string
	for _, s := range sentinels {
		if now, ok := startTicks(s.pid); !ok || now != s.start {
			dead = append(dead, fmt.Sprintf("%s (pid %d)", s.what, s.pid))
		}
		killTreeVerified(s.pid)
	}
	if len(sentinels) > 0 && len(dead) == 0 {
		fmt.Fprintf(os.Stderr, "sentinels: %d unmarked orphans (acp, mcp, pty) alive after every test\n", len(sentinels))
	}
	return dead
}

// The negative control of the sentinels: in a PID namespace of its own,
// where nothing else can be hit, the same test rule without the mark
// reaps an unmarked orphan, and with the mark leaves it alone. So the
// mark is what protects the host's orphans, and the sentinel check above
// can fail.
func TestUnconfinedPolicyReapsUnmarkedOrphan(t *testing.T) {
	requireRoot(t)
	var got struct{ MarkedAlive, UnmarkedKilled bool }
	out := inPIDNamespace(t, &got, envNSControl+"=1", envReaperBin+"="+reaperBin)
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
	reap(markRules(rule))
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

// endLeftHelpers ends what the suite's tests left running under it — the
// suite is every orphan's subreaper as root (startSentinels) — and names
// each on stderr: a helper outlives its test only by a cleanup's miss,
// and none may outlive the suite.
func endLeftHelpers() {
	var left []string
	for _, pid := range descendantsOf(os.Getpid()) {
		if st := stateOf(pid); st == "" || st == "Z" {
			continue // exited: the suite's own exit lets init reap it
		}
		left = append(left, fmt.Sprintf("%d %q", pid, cmdlineOf(pid)))
		killTreeVerified(pid)
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "the suite ended %d processes its tests left running: %s\n", len(left), strings.Join(left, ", "))
	}
}
