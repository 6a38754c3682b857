package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/schematest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/ledger"
)

// reapPolicy terminates what the integration trees leave behind, acting
// at once (min_age 0) with a short grace.
func reapPolicy(t *testing.T, extra string) string {
	t.Helper()
	return clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"

[[owner]]
name = "fake-gateway"
cmdline = 'dist/entry\.js gateway'

%s%s
[[rule]]
name = "orphaned-agent-trees"
when = ["reparented"]
kind = ["pty", "mcp", "acp"]
action = "terminate"
`, clitest.SelfSubreaper(t), extra))
}

// killGateway SIGKILLs the fake gateway and waits for its trees to be
// reparented to this test (the subreaper).
func killGateway(t *testing.T, g *fakeGateway) {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
	for pid := range g.pids {
		if pid == g.cmd.Process.Pid {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for clitest.ParentOf(pid) == g.cmd.Process.Pid {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d not reparented", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// liveHelpers returns the gateway's helpers (the gateway itself excluded)
// that are alive and not zombies.
func liveHelpers(g *fakeGateway) []int {
	var out []int
	for pid, start := range g.pids {
		if pid == g.cmd.Process.Pid {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") || !strings.Contains(string(b), fmt.Sprintf(" %d ", start)) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// TestReapGatewayKilled: the trees of a SIGKILLed gateway are reaped, the
// identical trees of a live gateway live on. The control: without the
// reaper, the orphans are still there.
func TestReapGatewayKilled(t *testing.T) {
	clitest.BecomeSubreaper(t)
	dead := startGateway(t, "18801")
	live := startGateway(t, "18802")
	killGateway(t, dead)
	time.Sleep(200 * time.Millisecond) // the control's window: an orphan that would die on its own has
	before := liveHelpers(dead)
	if len(before) != len(dead.pids)-1 {
		t.Fatalf("control: %d of %d orphans alive without the reaper", len(before), len(dead.pids)-1)
	}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	rep, r := clitest.ReapJSON(t, "--policy", reapPolicy(t, ""), "--audit-log", audit)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if killed := rep.Count("killed"); killed != 3 {
		t.Errorf("%d trees killed, want 3 (pty, mcp, acp): %+v", killed, rep.Findings)
	}
	if left := liveHelpers(dead); len(left) > 0 {
		t.Errorf("orphans alive after reap: %v", left)
	}
	if got := liveHelpers(live); len(got) != len(live.pids)-1 {
		t.Errorf("the live gateway lost processes: %d of %d alive", len(got), len(live.pids)-1)
	}
	b, _ := os.ReadFile(audit)
	if n := strings.Count(string(b), `"signal":"SIGTERM"`); n < len(before) {
		t.Errorf("audit log has %d SIGTERM lines for %d processes", n, len(before))
	}
}

// TestReapDryRun: the same scenario with --dry-run plans every tree and
// signals nothing but 0.
func TestReapDryRun(t *testing.T) {
	clitest.BecomeSubreaper(t)
	dead := startGateway(t, "18803")
	killGateway(t, dead)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	rep, r := clitest.ReapJSON(t, "--dry-run", "--policy", reapPolicy(t, ""), "--audit-log", audit)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if planned := rep.Count("planned"); planned != 3 {
		t.Errorf("%d trees planned, want 3: %+v", planned, rep.Findings)
	}
	time.Sleep(100 * time.Millisecond)
	if got := liveHelpers(dead); len(got) != len(dead.pids)-1 {
		t.Errorf("dry-run: %d of %d processes alive", len(got), len(dead.pids)-1)
	}
	b, _ := os.ReadFile(audit)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(line, `"event":"signal"`) && !strings.Contains(line, `"signal":"0"`) {
			t.Errorf("dry-run sent a real signal: %s", line)
		}
	}
	if !strings.Contains(string(b), `"signal":"0"`) {
		t.Error("dry-run sent no signal 0")
	}
}

// TestReapDeferred: a tree younger than min_age is not refused for doubt
// but deferred — its own outcome in JSON, with when it is due, exit 0 —
// and the same tree with min_age 0 is planned (the control).
func TestReapDeferred(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("deferred%d", time.Now().UnixNano()%1e9)
	pid := adopt(t, "npm exec mcp-remote https://"+mark+".test", "sleep 60; exit 0", nil)
	text := strings.Replace(clitest.MustReadFile(t, reapPolicy(t, "")), `min_age = "0s"`, `min_age = "1h"`, 1)
	text = strings.Replace(text, `kind = ["pty", "mcp", "acp"]`, fmt.Sprintf("kind = [\"pty\", \"mcp\", \"acp\"]\ncmdline = '%s'", mark), 1)
	if !strings.Contains(text, `min_age = "1h"`) || !strings.Contains(text, "cmdline = '"+mark) {
		t.Fatalf("the policy was not rewritten:\n%s", text)
	}
	// text is marked already (reapPolicy wrote it through markRules).
	pol := filepath.Join(t.TempDir(), "young.toml")
	os.WriteFile(pol, []byte(text), 0o644)
	rep, r := clitest.ReapJSON(t, "--dry-run", "--policy", pol)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0 (a deferred tree is no refusal): %s", r.Code, r.Stderr)
	}
	f := rep.Finding(pid)
	if f == nil || f.Outcome != "deferred" || !f.Deferred || f.DueAt == "" || !strings.Contains(f.Detail, "younger than min_age 1h0m0s") {
		t.Errorf("finding %+v, want outcome deferred with due_at", f)
	}
	control := filepath.Join(t.TempDir(), "control.toml")
	os.WriteFile(control, []byte(strings.Replace(text, `min_age = "1h"`, `min_age = "0s"`, 1)), 0o644)
	rep, r = clitest.ReapJSON(t, "--dry-run", "--policy", control)
	if f := rep.Finding(pid); r.Code != 0 || f == nil || f.Outcome != "planned" || f.Deferred {
		t.Errorf("control, min_age 0: exit %d, finding %+v, want planned", r.Code, f)
	}
}

// adopt starts a process tree whose root is reparented to this test (the
// subreaper): bash starts it in the background and exits. The root shows
// argv0 as its command line, so the script must not end in a lone command
// (bash would exec it and the name would be gone). It returns the root's
// pid.
func adopt(t *testing.T, argv0, script string, cred *syscall.Credential) int {
	t.Helper()
	pid := adoptShell(t, fmt.Sprintf("exec -a %q bash -c %q", argv0, script), cred)
	// Adopted is not yet exec'd: the subshell is reparented when the
	// outer shell exits, which on a busy machine can come before its
	// exec, and a scan then reads the subshell's command line.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if first, _, _ := strings.Cut(string(b), "\x00"); err != nil || first == argv0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exec %q in 5 s: its command line %q", pid, argv0, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// adoptShell is adopt for any bash command line: the process it starts in
// a subshell becomes the adopted root.
func adoptShell(t *testing.T, command string, cred *syscall.Credential) int {
	t.Helper()
	// A directory every user can reach: t.TempDir's parent is private.
	dir, err := os.MkdirTemp("", "reaper-adopt-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	pidfile := filepath.Join(dir, "pid")
	// The tree must not inherit the pipes CombinedOutput waits on.
	outer := exec.Command("bash", "-c", fmt.Sprintf(`(%s) </dev/null >/dev/null 2>&1 & echo $! > %q`, command, pidfile))
	if cred != nil {
		outer.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if out, err := outer.CombinedOutput(); err != nil {
		t.Fatalf("adopt: %v %s", err, out)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	t.Cleanup(func() {
		clitest.KillTreeVerified(pid)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	})
	deadline := time.Now().Add(5 * time.Second)
	for clitest.ParentOf(pid) != os.Getpid() {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not adopted (parent %d)", pid, clitest.ParentOf(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return pid
}

// TestReapLeavesItsOwnTree: the reaper runs as the child of a process
// that matches every rule. That tree is the reaper's own: it is no finding
// (counted in totals.own) and lives. The control: a sibling tree of the
// same shape, adopted alike, is reaped by the same run.
func TestReapLeavesItsOwnTree(t *testing.T) {
	clitest.BecomeSubreaper(t)
	out := filepath.Join(t.TempDir(), "out.json")
	pol := reapPolicy(t, "")
	sibling := adopt(t, "npm exec mcp-remote https://sibling.test", "sleep 60; exit 0", nil)
	script := fmt.Sprintf("%q reap --output json --policy %q --lock-file %q > %q; sleep 60",
		clitest.Bin, pol, filepath.Join(t.TempDir(), "lock"), out)
	wrapper := adopt(t, "npm exec mcp-remote https://self.test", script, nil)
	var rep struct {
		clitest.ReapReport
		Totals struct {
			Own int `json:"own"`
		} `json:"totals"`
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if json.Unmarshal(b, &rep) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report from the reaper: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// At least 1: what started this test may be reparented too.
	if f := rep.Finding(wrapper); f != nil || rep.Totals.Own < 1 {
		t.Errorf("the reaper's own tree: finding %+v, own %d; want none, 1 or more", f, rep.Totals.Own)
	}
	if _, ok := clitest.StartTicks(wrapper); !ok {
		t.Error("the reaper's ancestor died")
	}
	if f := rep.Finding(sibling); f == nil || f.Outcome != "killed" {
		t.Errorf("control: the sibling tree: finding %+v, want killed; all: %+v", f, rep.Findings)
	}
}

// TestReapOtherUser: another user's orphan is refused by default, and
// reaped when a rule names the user.
func TestReapOtherUser(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	pid := adopt(t, "npm exec mcp-remote https://nobody.test", "sleep 60; exit 0", nobody)
	rep, r := clitest.ReapJSON(t, "--policy", reapPolicy(t, ""))
	if r.Code != audit.ExitPartial {
		t.Fatalf("exit %d, want 3 (a planned action was refused): %s", r.Code, r.Stderr)
	}
	if f := rep.Finding(pid); f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "uid 65534") {
		t.Errorf("default: finding %+v, want refused for uid 65534", f)
	}
	if _, ok := clitest.StartTicks(pid); !ok {
		t.Fatal("another user's process was killed by default")
	}
	named := reapPolicy(t, `
[[rule]]
name = "nobody's trees"
when = ["reparented"]
kind = ["mcp"]
user = ["65534"]
action = "terminate"
`)
	rep, r = clitest.ReapJSON(t, "--policy", named)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
		t.Errorf("named user: finding %+v, want killed", f)
	}
}

// TestTwoReapers: two reapers started at once on the same orphans; one
// acts, the other waits for the lock; every process gets one SIGTERM.
func TestTwoReapers(t *testing.T) {
	clitest.BecomeSubreaper(t)
	dead := startGateway(t, "18804")
	killGateway(t, dead)
	orphans := liveHelpers(dead)
	lock := filepath.Join(t.TempDir(), "lock")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	pol := reapPolicy(t, "")
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		c := exec.Command(clitest.Bin, "reap", "--policy", pol, "--lock-file", lock, "--audit-log", audit, "--output", "json")
		c.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("a reaper: %v", err)
		}
	}
	b, _ := os.ReadFile(audit)
	for _, pid := range orphans {
		terms := 0
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, fmt.Sprintf(`"pid":%d,`, pid)) && strings.Contains(line, `"signal":"SIGTERM","result":"ok"`) {
				terms++
			}
		}
		if terms != 1 {
			t.Errorf("pid %d got %d SIGTERM, want 1", pid, terms)
		}
	}
	if left := liveHelpers(dead); len(left) > 0 {
		t.Errorf("orphans alive: %v", left)
	}
}

// TestReapZombie: a zombie under a live parent that never reaps is listed
// and never signalled.
func TestReapZombie(t *testing.T) {
	parent := exec.Command("bash", "-c", "sleep 0.3 & exec sleep 60; exit 0") // the exec'd sleep never waits; the child exits after the exec
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	var zombie int
	deadline := time.Now().Add(5 * time.Second)
	for zombie == 0 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent.Process.Pid, parent.Process.Pid))
		for _, c := range strings.Fields(string(b)) {
			var pid int
			fmt.Sscan(c, &pid)
			if s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(s), ") Z ") {
				zombie = pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no zombie appeared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	rep, r := clitest.ReapJSON(t, "--policy", reapPolicy(t, ""), "--audit-log", audit)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	listed := false
	for _, z := range rep.Zombies {
		listed = listed || z.PID == zombie
	}
	if !listed {
		t.Errorf("zombie %d not listed", zombie)
	}
	b, _ := os.ReadFile(audit)
	if strings.Contains(string(b), fmt.Sprintf(`"pid":%d,`, zombie)) {
		t.Errorf("a signal line names the zombie %d", zombie)
	}
}

// TestReapSparesRunThatBecameOwned: between the scan and the act, a live
// owner's ledger starts holding the orphan as a running run; the reap
// re-reads the ledger and spares it.
func TestReapSparesRunThatBecameOwned(t *testing.T) {
	clitest.BecomeSubreaper(t)
	pid := adopt(t, "npm exec mcp-remote https://owned.test", "sleep 60; exit 0", nil)
	start, _ := clitest.StartTicks(pid)
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := func(ticks uint64) string { return strings.TrimSpace(string(boot)) + ":" + fmt.Sprint(ticks) }
	selfStart, _ := clitest.StartTicks(os.Getpid())
	path := filepath.Join(t.TempDir(), "ledger.json")
	owner := ledger.Owner{Name: "fake-gateway", PID: os.Getpid(), Start: id(selfStart)}
	if err := ledger.WriteFile(path, &ledger.Ledger{Owner: owner}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	g := &globalOptions{stdout: &stdout, stderr: &stderr}
	opts := &reapOptions{lockFile: filepath.Join(t.TempDir(), "lock"), lockTimeout: time.Second}
	opts.policyFile, opts.output, opts.ledgers, opts.journal = reapPolicy(t, ""), "json", []string{path}, "off"
	opts.beforeAct = func() {
		l := &ledger.Ledger{Owner: owner, Runs: []ledger.Run{{ID: "adopted", PID: pid, Start: id(start), State: ledger.RunRunning}}}
		if err := ledger.WriteFile(path, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := runReap(context.Background(), opts, g); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep clitest.ReapReport
	json.Unmarshal(stdout.Bytes(), &rep)
	if f := rep.Finding(pid); f == nil || f.Outcome != "deferred" || !f.Deferred || !strings.Contains(f.Detail, "became run adopted") {
		t.Errorf("not spared: %+v\n%s", rep.Findings, stdout.String())
	}
	if _, ok := clitest.StartTicks(pid); !ok {
		t.Error("the run that became owned was killed")
	}
}

// TestReapNoPermission: a reaper that may not signal what its plan names
// exits 77 and the process lives. Here: root without CAP_KILL (a unit
// whose bounding set lacks it), a rule reaching another user's orphan by
// its user list. (A user's own reaper has no such plan: another user's
// trees are out of its scope.) The control: the same reap with CAP_KILL
// kills it.
func TestReapNoPermission(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		skips.Skip(t, "needs setpriv (util-linux) to drop CAP_KILL")
	}
	url := "https://noperm-" + clitest.Mark + ".test"
	dir := sharedDir(t, 0o777)
	pol := filepath.Join(dir, "policy.toml")
	text := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"1s\"\n%s\n[[rule]]\nname = \"nobody's trees\"\nwhen = [\"reparented\"]\ncmdline = '%s'\nuser = [\"65534\"]\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), regexp.QuoteMeta(url))
	if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	reap := func(pid int, dropKill bool) (*clitest.ReapReport, int) {
		args := []string{clitest.Bin, "reap", "--policy", pol, "--lock-file", filepath.Join(dir, "lock"), "--output", "json", "--journal", "off"}
		if dropKill {
			args = append([]string{"setpriv", "--bounding-set=-kill", "--inh-caps=-kill"}, args...)
		}
		c := exec.Command(args[0], args[1:]...)
		out, err := c.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var rep clitest.ReapReport
		json.Unmarshal(out, &rep)
		return &rep, code
	}
	pid := adopt(t, "npm exec mcp-remote "+url, "sleep 60; exit 0", nobody)
	rep, code := reap(pid, true)
	if code != 77 {
		t.Errorf("root without CAP_KILL: exit %d, want 77", code)
	}
	if f := rep.Finding(pid); f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "permission") {
		t.Errorf("finding %+v, want refused for lack of permission", f)
	}
	if _, ok := clitest.StartTicks(pid); !ok {
		t.Fatal("the process died")
	}
	if rep, code := reap(pid, false); code != 0 || clitest.Alive(pid) {
		t.Errorf("control, with CAP_KILL: exit %d, alive %v; want 0, killed (%+v)", code, clitest.Alive(pid), rep.Finding(pid))
	}
}

// TestReapOtherUserByEvidence: another user's orphan that its own
// evidence proves left behind — an MCP server carrying OpenCode's marker,
// in the process group its opencode led, which is gone — is reaped by the
// shipped example policy, whose rules that signal say user =
// ["@evidence"]. The control: the same policy without those lines refuses
// it, and the refusal names the fix.
func TestReapOtherUserByEvidence(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "evmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	dir, err := os.MkdirTemp("", "reaper-evidence-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	pidfile := filepath.Join(dir, "pid")
	// The outer bash leads a process group and names itself in
	// OPENCODE_PID, as opencode does for its servers; it exits, and its
	// background child keeps the group.
	outer := exec.Command("bash", "-c", fmt.Sprintf(`(OPENCODE_PID=$$ exec -a "node server.mjs %s" bash -c 'sleep 60; exit 0') </dev/null >/dev/null 2>&1 & echo $! > %q`, mark, pidfile))
	outer.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := outer.CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	b, _ := os.ReadFile(pidfile)
	var pid int
	fmt.Sscan(string(b), &pid)
	if pid <= 0 {
		t.Fatalf("no pid in %q", b)
	}
	t.Cleanup(func() {
		clitest.KillTreeVerified(pid)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	})
	for deadline := time.Now().Add(5 * time.Second); clitest.ParentOf(pid) != os.Getpid(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not adopted (parent %d)", pid, clitest.ParentOf(pid))
		}
	}
	if clitest.PgidOf(pid) != outer.Process.Pid {
		t.Fatalf("pid %d: group %d, want the gone leader's %d", pid, clitest.PgidOf(pid), outer.Process.Pid)
	}

	example := clitest.ExamplePolicy(t, mark)
	pol, _ := os.ReadFile(example)
	without := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(without, []byte(regexp.MustCompile(`(?m)^user = \["@evidence"\].*\n`).ReplaceAllString(string(pol), "")), 0o644)
	rep, r := clitest.ReapJSON(t, "--policy", without)
	f := rep.Finding(pid)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, `has no user list: add "nobody" to its user list, or "@evidence"`) {
		t.Fatalf("control, no @evidence: finding %+v, want refused naming the fix\n%s", f, r.Stderr)
	}
	if _, ok := clitest.StartTicks(pid); !ok {
		t.Fatal("control: the process died without @evidence")
	}
	t.Logf("control: %s by %s: %s", f.Outcome, f.Rule, f.Detail)

	rep, r = clitest.ReapJSON(t, "--policy", example)
	f = rep.Finding(pid)
	if f == nil || f.Outcome != "killed" || f.Rule != "agent-client-dead" || !clitest.Contains(f.Reasons, "owner-dead") {
		t.Fatalf("with @evidence: finding %+v, want killed as owner-dead by agent-client-dead\n%s", f, r.Stderr)
	}
	t.Logf("with @evidence: %s by %s, evidence %q", f.Outcome, f.Rule, f.Evidence)
}

// --quiet prints a line for what was done and nothing when nothing was:
// the first reap kills a marked orphan and says so in one line; the
// second finds nothing and prints nothing. The control: without --quiet
// the same empty run prints its whole report.
func TestReapQuiet(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "qmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pid := adopt(t, "npm exec quiet-mcp "+mark, "sleep 60; exit 0", nil)
	// A second tree ignores SIGTERM (its sleep inherits the ignore), so
	// only SIGKILL or cgroup.kill ends it.
	stubborn := adopt(t, "npm exec stubborn-mcp "+mark, "trap '' TERM; sleep 60; exit 0", nil)
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", clitest.SelfSubreaper(t), mark))
	lock := filepath.Join(t.TempDir(), "lock")
	r := clitest.RunReaper(t, nil, "reap", "-q", "--policy", pol, "--lock-file", lock)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("first reap -q: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	lines := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var p int
		fmt.Sscanf(l, "reaper reap: tree %d ", &p)
		lines[p] = l
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[pid], fmt.Sprintf("reaper reap: tree %d killed by SIGTERM (", pid)) {
		t.Errorf("first reap -q: %q; want one line per tree, %d killed by SIGTERM", r.Stdout, pid)
	}
	if l := lines[stubborn]; !strings.HasPrefix(l, fmt.Sprintf("reaper reap: tree %d killed by SIGKILL after the grace (", stubborn)) &&
		!strings.HasPrefix(l, fmt.Sprintf("reaper reap: tree %d killed by cgroup.kill (", stubborn)) {
		t.Errorf("the tree that ignores SIGTERM: %q; want it killed after the grace, or by cgroup.kill", l)
	}
	r = clitest.RunReaper(t, nil, "reap", "-q", "--policy", pol, "--lock-file", lock)
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Errorf("second reap -q, nothing to do: exit %d, stdout %q, stderr %q; want nothing", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunReaper(t, nil, "reap", "--policy", pol, "--lock-file", lock)
	if !strings.Contains(r.Stdout, "0 findings") { // "·" or "-": the locale decides
		t.Errorf("control, no -q: stdout %q, want the whole report", r.Stdout)
	}
}

// A timer's reap records a report-only finding once, and again when it
// changes, not on every run: the audit log gets one decision for three
// runs, another when the rule that names it changes; --log-repeats (the
// control) records it on every run.
func TestReapRecordsReportOnlyOnce(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "seenmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pid := adopt(t, "npm exec seen-mcp "+mark, "sleep 60; exit 0", nil)
	policyNamed := func(rule string) string {
		return clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\n%s\n[[rule]]\nname = %q\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"report\"\n", clitest.SelfSubreaper(t), rule, mark))
	}
	dir := t.TempDir()
	lock, log := filepath.Join(dir, "reaper.lock"), filepath.Join(dir, "audit.jsonl")
	decisions := func() int {
		data, _ := os.ReadFile(log)
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"event":"decision"`) && strings.Contains(line, fmt.Sprintf(`"root_pid":%d,`, pid)) {
				n++
			}
		}
		return n
	}
	reapWith := func(pol string, extra ...string) {
		t.Helper()
		r := clitest.RunReaper(t, nil, append([]string{"reap", "-q", "--policy", pol, "--lock-file", lock, "--audit-log", log, "--journal", "off"}, extra...)...)
		if r.Code != 0 {
			t.Fatalf("reap: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	}
	first := policyNamed("watch")
	for i := 0; i < 3; i++ {
		reapWith(first)
	}
	if n := decisions(); n != 1 {
		t.Fatalf("three reaps of one report-only finding: %d decisions for %d, want 1", n, pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "reaper.seen")); err != nil {
		t.Errorf("the seen state beside the lock: %v", err)
	}
	reapWith(policyNamed("watch-renamed"))
	if n := decisions(); n != 2 {
		t.Errorf("after the rule changed: %d decisions, want 2", n)
	}
	reapWith(first, "--log-repeats")
	reapWith(first, "--log-repeats")
	if n := decisions(); n != 4 {
		t.Errorf("control, --log-repeats twice: %d decisions, want 4", n)
	}

	// reaper history reads the same log: three decisions by "watch".
	r := clitest.RunReaper(t, nil, "history", "--audit-log", log, "--rule", "watch", "-o", "json")
	var h audit.History
	if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil || r.Code != 0 {
		t.Fatalf("history: exit %d, %v\n%s", r.Code, err, r.Stderr)
	}
	if h.Totals.Decisions != 3 || h.Totals.Outcomes["reported"] != 3 || h.Records[0].RootPID != pid {
		t.Errorf("history of rule watch: %+v, want 3 reported decisions for %d", h.Totals, pid)
	}
}

// A reap's JSON keeps to the shipped schema (audit/report.schema.json) as
// the scans' do (audit.TestReportSchema): a marked orphan killed, its
// outcome, members and uid in the report.
func TestReapJSONMatchesSchema(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "jsmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pid := adopt(t, "npm exec schema-mcp "+mark, "sleep 60; exit 0", nil)
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", clitest.SelfSubreaper(t), mark))
	r := clitest.RunReaper(t, nil, "reap", "-o", "json", "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "lock"))
	if r.Code != 0 || !strings.Contains(r.Stdout, fmt.Sprintf(`"root_pid": %d`, pid)) || !strings.Contains(r.Stdout, `"outcome": "killed"`) {
		t.Fatalf("reap: exit %d, want %d killed\n%s\n%s", r.Code, pid, r.Stdout, r.Stderr)
	}
	schema, err := os.ReadFile("../../audit/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := schematest.Validate(schema, []byte(r.Stdout))
	if err != nil || len(errs) > 0 {
		t.Errorf("the reap's JSON against the schema: %v\n%s", err, strings.Join(errs, "\n"))
	}
}

// On a terminal, reap says what it is doing while it waits out a tree's
// grace: a line on stderr, rewritten in place and cleared when the tree
// is done. Off a terminal — a pipe, as under a timer (the control) — it
// says nothing while it works.
func TestReapProgressOnTerminal(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "progmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	policyText := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"3s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", clitest.SelfSubreaper(t), mark)
	pol := clitest.WritePolicy(t, policyText)
	lock := filepath.Join(t.TempDir(), "lock")

	stubborn := adopt(t, "npm exec progress-mcp "+mark, "trap '' TERM; sleep 60; exit 0", nil)
	master, slave, err := clitest.OpenPTY()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var stdout bytes.Buffer
	cmd := exec.Command(clitest.Bin, "reap", "--policy", pol, "--lock-file", lock)
	cmd.Stdout, cmd.Stderr = &stdout, slave
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				read <- b.String()
				return
			}
		}
	}()
	runErr := cmd.Run()
	slave.Close()
	var onTerminal string
	select {
	case onTerminal = <-read:
	case <-time.After(5 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	if runErr != nil {
		t.Fatalf("reap: %v\n%s\n%q", runErr, stdout.String(), onTerminal)
	}
	if want := fmt.Sprintf("reaper: tree %d: SIGTERM sent; 2 of 2 processes left, ", stubborn); !strings.Contains(onTerminal, want) || !strings.Contains(onTerminal, "of the grace to go") {
		t.Errorf("stderr on a terminal: %q; want %q … of the grace to go", onTerminal, want)
	}
	if !strings.HasSuffix(onTerminal, "\r\x1b[K") {
		t.Errorf("stderr on a terminal: %q; want the line cleared when the tree is done", onTerminal)
	}
	if !strings.Contains(stdout.String(), "killed") {
		t.Errorf("stdout: %q; want the report", stdout.String())
	}

	again := adopt(t, "npm exec progress-mcp "+mark, "trap '' TERM; sleep 60; exit 0", nil)
	r := clitest.RunReaper(t, nil, "reap", "--policy", pol, "--lock-file", lock)
	if r.Code != 0 || strings.Contains(r.Stderr, "SIGTERM sent") || !strings.Contains(r.Stdout, fmt.Sprint(again)) {
		t.Errorf("control, stderr a pipe: exit %d, stderr %q, stdout %q", r.Code, r.Stderr, r.Stdout)
	}
}

// A live finding's memory is its PSS: read from each member's
// smaps_rollup, never more than its RSS, and the reclaimable total is
// made of it. The control is the RSS the same report gives.
func TestReclaimableIsPSS(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "pssmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pid := adopt(t, "npm exec pss-mcp "+mark, "sleep 60 & sleep 60; exit 0", nil)
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"report\"\n", clitest.SelfSubreaper(t), mark))
	r := clitest.RunReaper(t, nil, "scan", "--policy", pol, "-o", "json")
	var rep struct {
		Findings []struct {
			RootPID  int    `json:"root_pid"`
			RSSBytes uint64 `json:"rss_bytes"`
			PSSBytes uint64 `json:"pss_bytes"`
		} `json:"findings"`
		Totals struct {
			Reclaimable uint64 `json:"reclaimable_bytes"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].RootPID != pid {
		t.Fatalf("findings %+v, want the one rooted at %d", rep.Findings, pid)
	}
	f := rep.Findings[0]
	if f.PSSBytes == 0 || f.PSSBytes > f.RSSBytes {
		t.Errorf("pss %d, rss %d: want 0 < pss ≤ rss", f.PSSBytes, f.RSSBytes)
	}
	if rep.Totals.Reclaimable != f.PSSBytes {
		t.Errorf("reclaimable %d, want the finding's pss %d (its rss is %d)", rep.Totals.Reclaimable, f.PSSBytes, f.RSSBytes)
	}
}

// A parent holding many zombies is named with how close its user is to
// its process limit: the count, the user's processes and RLIMIT_NPROC.
// The control: a parent of a few zombies is not read for it.
func TestZombieParentNearItsLimit(t *testing.T) {
	// As root, the parent of many runs in a pids cgroup of this test's
	// with pids.max 64 (the v1 pids hierarchy, or v2's), which the report
	// names beside RLIMIT_NPROC.
	cg := pidsCgroup(t)
	start := func(n int) int {
		// perl (perl-base: on every Debian) forks n children that exit,
		// and never waits for them; bash would reap its jobs itself.
		join := ""
		if cg != "" && n > 10 {
			join = fmt.Sprintf("echo $$ > %s/cgroup.procs && ", cg)
		}
		c := exec.Command("bash", "-c", fmt.Sprintf(`%sulimit -Su 4096; exec perl -e 'for (1..%d) { exit 0 unless fork } sleep 600'`, join, n))
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
		clitest.WaitForN(t, n, func() bool { return zombiesOf(c.Process.Pid) == n }, "the zombies under their parent")
		return c.Process.Pid
	}
	many, few := start(12), start(3)
	r := clitest.RunReaper(t, nil, "scan", "-o", "json", "--policy", clitest.WritePolicy(t, "version = 1\n"))
	var doc struct {
		Groups []struct {
			ParentPID     int    `json:"parent_pid"`
			Count         int    `json:"count"`
			UserProcesses int    `json:"user_processes"`
			ProcessLimit  uint64 `json:"process_limit"`
			PIDsMax       uint64 `json:"pids_max"`
			PIDsCurrent   uint64 `json:"pids_current"`
			PIDsCgroup    string `json:"pids_cgroup"`
		} `json:"zombie_groups"`
	}
	json.Unmarshal([]byte(r.Stdout), &doc)
	seen := 0
	for _, g := range doc.Groups {
		switch g.ParentPID {
		case many:
			seen++
			if g.Count != 12 || g.ProcessLimit != 4096 || g.UserProcesses < 13 {
				t.Errorf("the parent of 12: %+v, want 12 zombies, a limit of 4096 and its user's processes", g)
			}
			if cg != "" && (g.PIDsMax != 64 || g.PIDsCurrent != 13 || !strings.HasSuffix(cg, g.PIDsCgroup)) {
				t.Errorf("the parent of 12: %+v, want pids.max 64 with 13 tasks of %s", g, cg)
			}
		case few:
			seen++
			if g.Count != 3 || g.ProcessLimit != 0 || g.UserProcesses != 0 || g.PIDsMax != 0 {
				t.Errorf("control, the parent of 3: %+v, want no limit read", g)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("zombie groups %+v: want both parents", doc.Groups)
	}
	table := clitest.RunReaper(t, nil, "scan", "--policy", clitest.WritePolicy(t, "version = 1\n"))
	if !strings.Contains(table.Stdout, "of a limit of 4096 (RLIMIT_NPROC)") {
		t.Errorf("the table does not say the limit:\n%s", table.Stdout)
	}
	if cg != "" && !strings.Contains(table.Stdout, "13 tasks, zombies and threads included, of pids.max 64") {
		t.Errorf("the table does not say the cgroup's limit:\n%s", table.Stdout)
	}
}

// pidsCgroup makes a pids cgroup of this test's with pids.max 64, removed
// when the test ends: its directory, or "" (and why, logged) when this
// is not root or the pids controller cannot be used.
func pidsCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("not root: no pids cgroup (the RLIMIT_NPROC part still runs)")
		return ""
	}
	parent := "/sys/fs/cgroup/pids" // v1
	if _, err := os.Stat(parent + "/cgroup.procs"); err != nil {
		parent = "/sys/fs/cgroup" // v2, when pids is delegated below its root
		if b, err := os.ReadFile(parent + "/cgroup.subtree_control"); err != nil || !strings.Contains(string(b), "pids") {
			t.Log("no pids controller to use here: the cgroup part is not checked")
			return ""
		}
	}
	dir := filepath.Join(parent, fmt.Sprint("reaper-test-pids-", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Logf("no pids cgroup: %v", err)
		return ""
	}
	t.Cleanup(func() {
		for deadline := time.Now().Add(30 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		}
	})
	if err := os.WriteFile(dir+"/pids.max", []byte("64"), 0o644); err != nil {
		t.Logf("pids.max: %v", err)
		return ""
	}
	return dir
}
