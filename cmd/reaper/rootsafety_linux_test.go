package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/run"
)

// The tests of the threat model (docs/threat-model.md): an ordinary user
// on the same host, and processes that fight back, against a root reaper.

var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// envNoDump makes a helper non-dumpable and sleep.
const envNoDump = "REAPER_TEST_NODUMP"

// runNoDumpHelper is a process that calls prctl(PR_SET_DUMPABLE, 0), as
// any user's process may, and sleeps.
func runNoDumpHelper() {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		os.Exit(2)
	}
	time.Sleep(10 * time.Minute)
	os.Exit(0)
}

// procFileOwner is the owner of /proc/PID/stat, what the reaper once took
// for the process's user (an fstat of the stat file it reads anyway).
func procFileOwner(t *testing.T, pid int) uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/stat", pid), &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid
}

// sharedDir makes a directory other users can reach (t.TempDir's parent
// is private), with mode, removed at cleanup.
func sharedDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "reaper-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, mode)
	return dir
}

// userDir makes a directory owned by nobody, as a user's home would be.
func userDir(t *testing.T) string {
	t.Helper()
	dir := sharedDir(t, 0o755)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Threat 1: another user's non-dumpable process has a /proc/PID owned by
// root. It is still that user's: a root reaper without a rule naming the
// user refuses it.
func TestNonDumpableOtherUserIsNotRoots(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	// The helper is this test binary, copied where nobody may run it; it
	// calls prctl(PR_SET_DUMPABLE, 0) and sleeps, an ACP runtime by its
	// argv (claude-agent-acp). Not titled claude: a live client's own
	// process, reparented, is a session and no finding at all.
	dir := sharedDir(t, 0o755)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "agent-runtime")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := adoptShell(t, fmt.Sprintf("%s=1 exec -a claude-agent-acp %s --agent", envNoDump, exe), nobody)
	clitest.WaitFor(t, func() bool {
		return strings.HasPrefix(clitest.CmdlineOf(pid), "claude-agent-acp") && procFileOwner(t, pid) == 0
	}, "prctl(PR_SET_DUMPABLE, 0)")
	// The condition the reaper once fell for: the directory says root.
	if owner := procFileOwner(t, pid); owner != 0 {
		t.Fatalf("control: /proc/%d/stat is owned by %d, not root: the process is dumpable, the test proves nothing", pid, owner)
	}
	rep, r := clitest.ReapJSON(t, "--policy", reapPolicy(t, ""))
	f := rep.Finding(pid)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "uid 65534") {
		t.Errorf("finding %+v, want refused as uid 65534's", f)
	}
	if r.Code != audit.ExitPartial {
		t.Errorf("exit %d, want 3 (a planned action was refused)", r.Code)
	}
	if clitest.StateOf(pid) != "S" {
		t.Errorf("the other user's process is in state %q, want S (never signalled)", clitest.StateOf(pid))
	}
}

// Threat 2: a member that appears in the tree between the scan and the
// stop, as another user (setpriv --reuid), is checked as the plan's
// members are: the whole tree is refused and continued.
func TestNewMemberOfAnotherUserRefused(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	flag := filepath.Join(t.TempDir(), "go")
	pid := adopt(t, "npm exec mcp-remote https://setpriv.test",
		fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done; setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600 & wait", flag), nil)
	var child int
	var stdout, stderr bytes.Buffer
	g := &globalOptions{stdout: &stdout, stderr: &stderr}
	opts := &reapOptions{lockFile: filepath.Join(t.TempDir(), "lock"), lockTimeout: time.Second}
	opts.policyFile, opts.output, opts.journal = reapPolicy(t, ""), "json", "off"
	opts.beforeAct = func() {
		os.WriteFile(flag, nil, 0o644)
		clitest.WaitFor(t, func() bool {
			for _, c := range clitest.ChildrenOf(pid) {
				if st, err := os.Stat(fmt.Sprintf("/proc/%d", c)); err == nil && st.Sys().(*syscall.Stat_t).Uid == 65534 {
					child = c
					return true
				}
			}
			return false
		}, "the child as uid 65534")
	}
	err := runReap(context.Background(), opts, g)
	var st *audit.StatusError
	if !errors.As(err, &st) || st.Code != audit.ExitPartial {
		t.Errorf("runReap: %v, want exit 3\n%s", err, stderr.String())
	}
	var rep clitest.ReapReport
	json.Unmarshal(stdout.Bytes(), &rep)
	f := rep.Finding(pid)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "appeared in the tree") || !strings.Contains(f.Detail, "uid 65534") {
		t.Fatalf("finding %+v, want refused for the new member of uid 65534", f)
	}
	for _, p := range []int{pid, child} {
		if s := clitest.StateOf(p); s == "" || s == "T" {
			t.Errorf("pid %d is in state %q after the refusal, want alive and continued", p, s)
		}
	}
}

// Threat 4: a FIFO in place of a state file. Opening it for reading would
// block until a writer came; the reaper opens every file O_NONBLOCK and
// refuses what is not a regular file, and the run ends at once.
func TestFIFOStateFileDoesNotHang(t *testing.T) {
	clitest.RequireRoot(t)
	runAs(t, 65534) // a user's state is read when they own a process
	home := userDir(t)
	state := filepath.Join(home, ".openclaw")
	for _, d := range []string{state, filepath.Join(state, "acpx")} {
		os.Mkdir(d, 0o755)
		os.Chown(d, 65534, 65534)
	}
	fifo := filepath.Join(state, "acpx", "process-leases.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(fifo, 65534, 65534)
	// Control: a plain open of it blocks.
	opened := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(fifo, os.O_RDONLY, 0); err == nil {
			f.Close()
		}
		close(opened)
	}()
	select {
	case <-opened:
		t.Fatal("control: opening the FIFO did not block")
	case <-time.After(200 * time.Millisecond):
	}
	t.Cleanup(func() { // let the blocked open return
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	for _, args := range [][]string{
		{"scan", "--output", "json", "--timeout", "20s"},
		{"reap", "--output", "json", "--timeout", "20s", "--policy", reapPolicy(t, ""), "--lock-file", filepath.Join(t.TempDir(), "lock")},
	} {
		start := time.Now()
		r := clitest.RunReaper(t, []string{"OPENCLAW_STATE_DIR=" + state}, args...)
		took := time.Since(start)
		if r.Code != 0 && r.Code != audit.ExitPartial {
			t.Errorf("%s: exit %d: %s", args[0], r.Code, r.Stderr)
		}
		if took > 10*time.Second {
			t.Errorf("%s took %v: blocked on the FIFO", args[0], took)
		}
		if !strings.Contains(r.Stdout, "process-leases.json: not a regular file") {
			t.Errorf("%s: the report does not name the FIFO:\n%s", args[0], r.Stdout)
		}
	}
}

// Threat 4, the bound: a process table that reads slowly (a seam stands in
// for a loaded host) ends scan and reap at --timeout, nothing signalled.
func TestSlowProcReadEndsAtTimeout(t *testing.T) {
	orig := run.ReadTable
	t.Cleanup(func() { run.ReadTable = orig })
	run.ReadTable = func(root string) (*platform.Snapshot, error) {
		time.Sleep(5 * time.Second)
		return platform.ReadSnapshot(root)
	}
	for _, name := range []string{"scan", "reap"} {
		var stdout bytes.Buffer
		g := &globalOptions{stdout: &stdout, stderr: io.Discard}
		start := time.Now()
		var err error
		if name == "scan" {
			opts := &scanOptions{output: "json", journal: "off", timeout: 300 * time.Millisecond}
			err = runScan(context.Background(), opts, g)
		} else {
			opts := &reapOptions{lockFile: filepath.Join(t.TempDir(), "lock"), lockTimeout: time.Second}
			opts.output, opts.journal, opts.timeout = "json", "off", 300*time.Millisecond
			err = runReap(context.Background(), opts, g)
		}
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "deadline (--timeout 300ms) passed") {
			t.Errorf("%s: %v, want the deadline's error", name, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s took %v with --timeout 300ms", name, took)
		}
	}
	// Control: without the seam's delay, the same run finishes.
	run.ReadTable = orig
	if err := runScan(context.Background(), &scanOptions{output: "json", journal: "off", timeout: 30 * time.Second},
		&globalOptions{stdout: io.Discard, stderr: io.Discard}); err != nil {
		t.Errorf("control: %v", err)
	}
}

// Threat 5: garbage in one user's OpenClaw state holds back only that
// user's trees, and the run exits 3; other trees are reaped — also a root
// process that names the user's state dir in OPENCLAW_STATE_DIR: a user's
// state speaks, and doubts, only for that user's processes.
func TestOneUsersGarbageVetoesOnlyTheirTrees(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	state := userDir(t)
	leases := filepath.Join(state, "process-leases.json")
	os.WriteFile(leases, []byte("garbage{"), 0o644)
	os.Chown(leases, 65534, 65534)
	roots := adopt(t, "npm exec mcp-remote https://root.test", "sleep 600; exit 0", nil)
	theirs := adopt(t, "npm exec mcp-remote https://nobody.test", "sleep 600; exit 0", nobody)
	named := adoptShell(t, fmt.Sprintf("OPENCLAW_STATE_DIR=%s exec -a 'npm exec mcp-remote https://named.test' bash -c 'sleep 600; exit 0'", state), nil)
	pol := reapPolicy(t, `[[rule]]
name = "root's and nobody's"
when = ["reparented"]
kind = ["mcp"]
user = ["0", "65534"]
action = "terminate"
`)
	// Named with --ledger, the state dir is the operator's: garbage in it
	// stops the run (78) and nothing is signalled.
	if r := clitest.RunReaper(t, nil, "reap", "--policy", pol, "--ledger", state, "--lock-file", filepath.Join(t.TempDir(), "lock")); r.Code != audit.ExitConfig {
		t.Fatalf("--ledger with garbage: exit %d, want 78\n%s", r.Code, r.Stderr)
	}
	rr := clitest.RunReaper(t, []string{"OPENCLAW_STATE_DIR=" + state}, "reap", "--output", "json", "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "lock"))
	var rep clitest.ReapReport
	if err := json.Unmarshal([]byte(rr.Stdout), &rep); err != nil {
		t.Fatalf("reap: exit %d, %v\n%s", rr.Code, err, rr.Stderr)
	}
	if rr.Code != audit.ExitPartial {
		t.Errorf("exit %d, want 3: a planned action was refused for unreadable state", rr.Code)
	}
	for _, pid := range []int{roots, named} {
		if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
			t.Errorf("root's tree %d: %+v, want killed (the garbage is nobody's, and speaks for nobody's processes only)", pid, f)
		}
	}
	f := rep.Finding(theirs)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "state of uid 65534 could not be read") {
		t.Errorf("nobody's tree: %+v, want refused for nobody's unreadable state", f)
	}
	if clitest.StateOf(theirs) != "S" {
		t.Errorf("nobody's tree is in state %q, want untouched", clitest.StateOf(theirs))
	}
}

// Threat 6: a link in a user's state dir to a file the user may not read.
// As root the reaper follows no link out of the state dir, and nothing of
// the file reaches its output.
func TestStateLinkToShadowNotRead(t *testing.T) {
	clitest.RequireRoot(t)
	runAs(t, 65534) // a user's state is read when they own a process
	secret, err := os.ReadFile("/etc/shadow")
	if err != nil || !bytes.Contains(secret, []byte("root:")) {
		skips.Skip(t, "no /etc/shadow with a root entry to point at")
	}
	state := userDir(t)
	if err := os.Symlink("/etc/shadow", filepath.Join(state, "openclaw.json")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(state, "openclaw.json"), 65534, 65534)
	os.Mkdir(filepath.Join(state, "acpx"), 0o755)
	os.Chown(filepath.Join(state, "acpx"), 65534, 65534)
	if err := os.Symlink("/etc/shadow", filepath.Join(state, "acpx", "process-leases.json")); err != nil {
		t.Fatal(err)
	}
	r := clitest.RunReaper(t, []string{"OPENCLAW_STATE_DIR=" + state}, "scan", "--output", "json", "--journal", "off")
	out := r.Stdout + r.Stderr
	if !strings.Contains(out, "a symbolic link, not followed") {
		t.Errorf("the link is not reported as refused:\n%s", out)
	}
	for _, line := range strings.Split(string(secret), "\n") {
		name, _, _ := strings.Cut(line, ":")
		if len(name) > 2 && strings.Contains(out, name+":") {
			t.Errorf("output quotes /etc/shadow (%q):\n%s", name, out)
		}
	}
	if strings.Contains(out, "$6$") || strings.Contains(out, "$y$") {
		t.Errorf("output holds a password hash:\n%s", out)
	}
}

// Threat 8: an interrupt during grace ends the run promptly; nothing it
// stopped is left stopped, and the finding and the audit log say so, and
// the status is the signal's.
func TestInterruptDuringGrace(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	termed := filepath.Join(t.TempDir(), "termed")
	// The shell survives SIGTERM (its trap notes it) and keeps a child.
	pid := adopt(t, "npm exec mcp-remote https://interrupt.test",
		fmt.Sprintf("trap 'touch %s' TERM; while :; do sleep 600 & wait; done", termed), nil)
	clitest.WaitFor(t, func() bool { return len(clitest.ChildrenOf(pid)) == 1 }, "the tree's child")
	pol := clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "60s"
%s
[[rule]]
name = "interrupt"
when = ["reparented"]
cmdline = 'interrupt\.test'
action = "terminate"
`, clitest.SelfSubreaper(t)))
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(clitest.Bin, "reap", "--output", "json", "--policy", pol, "--audit-log", auditLog,
		"--lock-file", filepath.Join(t.TempDir(), "lock"), "--journal", "off")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	clitest.WaitFor(t, func() bool { _, err := os.Stat(termed); return err == nil }, "SIGTERM to the tree")
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the reaper took %v to stop after SIGINT", took)
	}
	// One word and one status for an interrupt, as reaper run's (issue
	// 64, item 11): interrupted, 128+SIGINT.
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGINT) {
		t.Errorf("exit %v, want 130", err)
	}
	var rep clitest.ReapReport
	json.Unmarshal(stdout.Bytes(), &rep)
	if f := rep.Finding(pid); f == nil || f.Outcome != "interrupted" || !strings.Contains(f.Detail, "interrupted") {
		t.Errorf("finding %+v, want interrupted", f)
	}
	for _, p := range append([]int{pid}, clitest.ChildrenOf(pid)...) {
		if s := clitest.StateOf(p); s == "T" || s == "t" {
			t.Errorf("pid %d left stopped", p)
		}
	}
	if b, _ := os.ReadFile(auditLog); !bytes.Contains(b, []byte("interrupted")) {
		t.Errorf("the audit log does not say the run was interrupted:\n%s", b)
	}
}

// As an ordinary user, the reaper cannot read other users' environments:
// it says so once, with a count, not once per process, and the evidence of
// a tree that rests on a marker's absence says the marker was not checked.
// The control: as root, neither.
func TestNonRootScanSaysWhatItCouldNotCheck(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	pid, dir, pol := urlMarkedSetup(t, "nonroot", 0o755, "", "name = \"marked\"\n")
	scanAs := func(cred *syscall.Credential) (string, string, []string) {
		c := exec.Command(clitest.Bin, "scan", "--policy", pol, "--output", "json", "--journal", "off")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		c.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		var rep struct {
			Findings []struct {
				RootPID  int      `json:"root_pid"`
				Evidence []string `json:"evidence"`
			} `json:"findings"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		ev := ""
		for _, f := range rep.Findings {
			if f.RootPID == pid {
				ev = strings.Join(f.Evidence, "\n")
			}
		}
		var env []string
		for _, w := range rep.Warnings {
			if strings.Contains(w, "environ") {
				env = append(env, w)
			}
		}
		return string(out), ev, env
	}
	// As nobody, root's tree is out of scope (no finding), and what could
	// not be read of other users' processes is one warning with a count.
	out, ev, env := scanAs(nobody)
	if ev != "" || !strings.Contains(out, `"out_of_scope"`) {
		t.Errorf("as nobody, root's tree: evidence %q; want no finding, counted out of scope\n%s", ev, out)
	}
	if len(env) != 1 || !strings.Contains(env[0], "processes: read /proc/*/environ: permission denied") {
		t.Errorf("as nobody, environ warnings %q: want one line with a count", env)
	}
	_, ev, env = scanAs(nil)
	if strings.Contains(ev, "could not be read") || len(env) != 0 {
		t.Errorf("control, as root: evidence %q, warnings %q", ev, env)
	}
}
