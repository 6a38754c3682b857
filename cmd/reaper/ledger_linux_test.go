package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// ledgerPolicy matches the ledger reasons only, so that a finding here is
// the ledger's doing, not reparenting's.
const ledgerPolicy = `version = 1
[[owner]]
name = "fake-gateway"
cmdline = 'dist/entry\.js gateway'

[[rule]]
name = "ledger"
when = ["owner-dead", "run-done", "session-ended"]
`

// gatewayLedger is the ledger the fake gateway would write: itself as owner
// and its three trees as runs, with the given run states and sessions.
type treeRoots struct{ pty, mcp, acp int }

func rootsOf(t *testing.T, g *fakeGateway) treeRoots {
	t.Helper()
	var r treeRoots
	for pid := range g.pids {
		if clitest.ParentOf(pid) != g.cmd.Process.Pid {
			continue
		}
		switch c := clitest.CmdlineOf(pid); {
		case strings.HasPrefix(c, "/bin/bash"):
			r.pty = pid
		case strings.HasPrefix(c, "npm exec"):
			r.mcp = pid
		case strings.Contains(c, "acp-wrapper"):
			r.acp = pid
		}
	}
	if r.pty == 0 || r.mcp == 0 || r.acp == 0 {
		t.Fatalf("gateway trees not found: %+v", r)
	}
	return r
}

func identity(t *testing.T, pid int, g *fakeGateway) string {
	t.Helper()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return platform.FormatIdentity(strings.TrimSpace(string(boot)), g.pids[pid])
}

func writeGatewayLedger(t *testing.T, g *fakeGateway, roots treeRoots, sessions []ledger.Session, state map[int]ledger.RunState, session map[int]string) string {
	t.Helper()
	l := &ledger.Ledger{Owner: ledger.Owner{Name: "fake-gateway", PID: g.cmd.Process.Pid,
		Start: identity(t, g.cmd.Process.Pid, g), Instance: "test"}, Sessions: sessions}
	for _, x := range []struct {
		id   string
		kind ledger.Kind
		pid  int
	}{{"pty-1", "pty", roots.pty}, {"mcp-1", "mcp", roots.mcp}, {"acp-1", "acp", roots.acp}} {
		st := state[x.pid]
		if st == "" {
			st = ledger.RunRunning
		}
		l.Runs = append(l.Runs, ledger.Run{ID: x.id, Kind: x.kind, PID: x.pid, Start: identity(t, x.pid, g),
			State: st, Session: session[x.pid]})
	}
	path := filepath.Join(t.TempDir(), "ledger.json")
	if err := ledger.WriteFile(path, l); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLedgerOwnerDead: while the gateway lives, its running runs are owned
// (the negative control: no finding); once it is SIGKILLed, each run's tree
// is a finding with owner-dead.
func TestLedgerOwnerDead(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18791")
	roots := rootsOf(t, g)
	path := writeGatewayLedger(t, g, roots, nil, nil, nil)
	pol := clitest.WritePolicy(t, ledgerPolicy)

	rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", path)
	for _, pid := range []int{roots.pty, roots.mcp, roots.acp} {
		if rep.Covers(pid) {
			t.Errorf("owner alive: pid %d is in a finding", pid)
		}
	}
	for _, run := range []string{"pty-1", "mcp-1", "acp-1"} {
		if s := rep.Status(run); s != "alive" {
			t.Errorf("owner alive: run %s is %q, want alive", run, s)
		}
	}

	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
	rep = clitest.ScanJSON(t, "--policy", pol, "--ledger", path)
	for run, pid := range map[string]int{"pty-1": roots.pty, "mcp-1": roots.mcp, "acp-1": roots.acp} {
		reasons, id, ok := rep.Finding(pid)
		if !ok || !slices.Contains(reasons, "owner-dead") || id != run {
			t.Errorf("owner dead: run %s (pid %d): finding %v, reasons %v, run %q", run, pid, ok, reasons, id)
		}
		if s := rep.Status(run); s != "orphaned" {
			t.Errorf("run %s is %q, want orphaned", run, s)
		}
	}
}

// TestLedgerRunDone: the gateway lives and marks its PTY run done, but the
// shell keeps running: run-done, under the live owner. The runs still
// marked running are not findings.
func TestLedgerRunDone(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18792")
	roots := rootsOf(t, g)
	pol := clitest.WritePolicy(t, ledgerPolicy)
	control := writeGatewayLedger(t, g, roots, nil, nil, nil)
	if rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", control); rep.Covers(roots.pty) {
		t.Fatal("control: a running PTY run is in a finding")
	}
	path := writeGatewayLedger(t, g, roots, nil, map[int]ledger.RunState{roots.pty: ledger.RunDone}, nil)
	rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", path)
	reasons, run, ok := rep.Finding(roots.pty)
	if !ok || !slices.Equal(reasons, []string{"run-done"}) || run != "pty-1" {
		t.Errorf("PTY run: finding %v, reasons %v, run %q; want run-done for pty-1", ok, reasons, run)
	}
	if rep.Covers(roots.mcp) || rep.Covers(roots.acp) || rep.Covers(g.cmd.Process.Pid) {
		t.Errorf("findings cover more than the done run: %+v", rep.Findings)
	}
}

// TestLedgerSessionEnded: a parent session is reset while its child ACP
// session's run lives: session-ended, through the parent.
func TestLedgerSessionEnded(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18793")
	roots := rootsOf(t, g)
	pol := clitest.WritePolicy(t, ledgerPolicy)
	sessions := func(parentState ledger.SessionState) []ledger.Session {
		return []ledger.Session{
			{Key: "agent:main:main", State: parentState},
			{Key: "agent:codex:acp:1", Parent: "agent:main:main", State: ledger.SessionActive},
		}
	}
	bySession := map[int]string{roots.acp: "agent:codex:acp:1", roots.pty: "agent:main:other"}
	control := writeGatewayLedger(t, g, roots, sessions(ledger.SessionActive), nil, bySession)
	if rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", control); rep.Covers(roots.acp) {
		t.Fatal("control: the child session's run is a finding while its parent is active")
	}
	path := writeGatewayLedger(t, g, roots, sessions(ledger.SessionReset), nil, bySession)
	rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", path)
	reasons, run, ok := rep.Finding(roots.acp)
	if !ok || !slices.Equal(reasons, []string{"session-ended"}) || run != "acp-1" {
		t.Errorf("ACP run: finding %v, reasons %v, run %q; want session-ended for acp-1", ok, reasons, run)
	}
	var acpTree []int
	for _, f := range rep.Findings {
		if f.RootPID == roots.acp {
			acpTree = f.PIDs
		}
	}
	if len(acpTree) != 3 { // wrapper, adapter, claude
		t.Errorf("ACP finding covers %v, want the wrapper and its two descendants", acpTree)
	}
	if rep.Covers(roots.pty) || rep.Covers(roots.mcp) {
		t.Errorf("findings cover other sessions' runs: %+v", rep.Findings)
	}
}

// TestLedgerPIDReused forces a ledger pid to be reused for real: in a new
// PID namespace, a process A is started and reaped, ns_last_pid is set to
// A's pid − 1, and the next process, B, gets A's pid. A ledger naming A's
// pid with A's identity must report pid-reused and never make B a finding;
// the control ledger with B's identity makes B a run-done finding, so the
// refusal is the identity check's doing.
func TestLedgerPIDReused(t *testing.T) {
	clitest.RequireRoot(t)
	var res nsResult
	inPIDNamespace(t, &res, envNSTest+"="+t.TempDir(), envReaperBin+"="+clitest.Bin)
	t.Logf("in the namespace: A and B both had pid %d (A started %s, B %s)", res.PID, res.StartA, res.StartB)
	if res.StartA == res.StartB {
		t.Fatalf("A and B have the same start identity %s: the reuse cannot be told apart (same clock tick)", res.StartA)
	}
	if res.Reused.Status != "pid-reused" || res.Reused.Covered {
		t.Errorf("ledger naming A: status %q, B in a finding %v; want pid-reused and no finding", res.Reused.Status, res.Reused.Covered)
	}
	if res.Control.Status != "orphaned" || !res.Control.Covered {
		t.Errorf("control ledger naming B: status %q, in a finding %v; want orphaned, in a finding", res.Control.Status, res.Control.Covered)
	}
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}

// nsResult is what the namespace helper reports.
type nsResult struct {
	PID            int
	StartA, StartB string
	Reused         nsScan
	Control        nsScan
}

type nsScan struct {
	Status  string
	Covered bool
}

const (
	envNSTest    = "REAPER_TEST_PIDNS"
	envReaperBin = "REAPER_TEST_BIN"
)

// runPIDNamespaceHelper is PID 1 of a new PID and mount namespace: it
// mounts a procfs of its own, forces pid reuse and runs reaper on it.
func runPIDNamespaceHelper(dir string) {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		os.Exit(2)
	}
	// Keep the mount below out of the host's mount table.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail("make mounts private: %v", err)
	}
	proc := filepath.Join(dir, "proc")
	os.Mkdir(proc, 0o755)
	if err := syscall.Mount("proc", proc, "proc", 0, ""); err != nil {
		fail("mount proc: %v", err)
	}
	boot, _ := os.ReadFile(filepath.Join(proc, "sys/kernel/random/boot_id"))
	identityOf := func(pid int) string {
		b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
		if err != nil {
			fail("stat %d: %v", pid, err)
		}
		var p platform.Process
		if err := platform.ParseStat(b, 4096, &p); err != nil {
			fail("%v", err)
		}
		return platform.FormatIdentity(strings.TrimSpace(string(boot)), p.StartTicks)
	}
	spawn := func() *os.Process {
		p, err := os.StartProcess("/bin/sleep", []string{"sleep", "60"}, &os.ProcAttr{})
		if err != nil {
			fail("spawn: %v", err)
		}
		return p
	}
	a := spawn()
	pid, startA := a.Pid, identityOf(a.Pid)
	a.Kill()
	a.Wait()
	// Ticks are 10 ms: let B start in a later one, so the identities differ.
	time.Sleep(30 * time.Millisecond)
	var b *os.Process
	for try := 0; try < 20 && b == nil; try++ {
		if err := os.WriteFile(filepath.Join(proc, "sys/kernel/ns_last_pid"), []byte(strconv.Itoa(pid-1)), 0); err != nil {
			fail("write ns_last_pid: %v", err)
		}
		p := spawn()
		if p.Pid == pid {
			b = p
		} else { // a runtime thread took the pid: try again
			p.Kill()
			p.Wait()
		}
	}
	if b == nil {
		fail("could not get pid %d again", pid)
	}
	defer func() { b.Kill(); b.Wait() }()
	res := nsResult{PID: pid, StartA: startA, StartB: identityOf(pid)}
	policy := filepath.Join(dir, "policy.toml")
	os.WriteFile(policy, []byte(ledgerPolicy), 0o644)
	scanWith := func(start string) nsScan {
		l := &ledger.Ledger{Owner: ledger.Owner{Name: "fake-gateway", PID: 1, Start: identityOf(1)},
			Runs: []ledger.Run{{ID: "victim", PID: pid, Start: start, State: ledger.RunDone}}}
		path := filepath.Join(dir, "ledger.json")
		if err := ledger.WriteFile(path, l); err != nil {
			fail("%v", err)
		}
		cmd := execHelper(os.Getenv(envReaperBin))
		cmd.Args = []string{"reaper", "scan", "--proc", proc, "--policy", policy, "--ledger", path, "--output", "json"}
		cmd.Env = os.Environ()
		out, err := cmd.Output()
		if err != nil {
			fail("reaper scan: %v", err)
		}
		var rep clitest.ScanReport
		if err := json.Unmarshal(out, &rep); err != nil {
			fail("%v", err)
		}
		return nsScan{Status: rep.Status("victim"), Covered: rep.Covers(pid)}
	}
	res.Reused = scanWith(startA)
	res.Control = scanWith(res.StartB)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}

// TestOpenClawStateDiscovered: reaper finds ~/.openclaw on its own, reads
// the gateway lock and the ACP lease file, and proves the lease's root pid
// by the wrapper's --openclaw-acpx-lease-id argv. While the gateway the lock
// names lives, the lease's tree is owned (control); once it is SIGKILLed,
// the tree is a finding with owner-dead, attributed to the lease.
func TestOpenClawStateDiscovered(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18794")
	roots := rootsOf(t, g)
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	now := time.Now().UTC()
	writeFile := func(name string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		os.MkdirAll(filepath.Dir(filepath.Join(state, name)), 0o700)
		if err := os.WriteFile(filepath.Join(state, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("gateway.0a1b2c3d.lock", map[string]any{"pid": g.cmd.Process.Pid,
		"createdAt": now.Add(-time.Minute).Format(time.RFC3339Nano), "startTime": g.pids[g.cmd.Process.Pid]})
	writeFile("acpx/process-leases.json", map[string]any{"version": 1, "leases": []any{map[string]any{
		"leaseId": "lease-7", "gatewayInstanceId": "gw", "sessionKey": "agent:codex:acp:7",
		"wrapperRoot": state + "/acpx", "wrapperPath": state + "/acpx/claude-agent-acp-wrapper.mjs",
		"rootPid": roots.acp, "commandHash": "h", "startedAt": now.UnixMilli(), "state": "open"}}})
	pol := clitest.WritePolicy(t, ledgerPolicy)
	env := []string{"HOME=" + home, "OPENCLAW_STATE_DIR=", "XDG_CONFIG_HOME=" + home}

	scan := func() *clitest.ScanReport {
		t.Helper()
		r := clitest.RunReaper(t, env, "scan", "--output", "json", "--policy", pol)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		var rep clitest.ScanReport
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return &rep
	}
	rep := scan()
	if s := rep.Status("lease-7"); s != "alive" || rep.Covers(roots.acp) {
		t.Fatalf("gateway alive: lease-7 is %q, in a finding %v; want alive and no finding", s, rep.Covers(roots.acp))
	}
	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
	rep = scan()
	reasons, run, ok := rep.Finding(roots.acp)
	if !ok || !slices.Contains(reasons, "owner-dead") || run != "lease-7" {
		t.Errorf("gateway dead: finding %v, reasons %v, run %q; want owner-dead for lease-7", ok, reasons, run)
	}
}

// TestReapPIDReusedBetweenScanAndSignal: in a new PID namespace the plan
// is made for process A; A is reaped and B forced onto its pid before the
// plan is carried out. The reaper refuses (pid-reused) and B lives. The
// control, a plan made for B, kills B.
func TestReapPIDReusedBetweenScanAndSignal(t *testing.T) {
	clitest.RequireRoot(t)
	var res nsReapResult
	inPIDNamespace(t, &res, envNSReap+"=1")
	t.Logf("%+v", res)
	if res.Reused.Outcome != "refused" || !strings.Contains(res.Reused.Detail, "pid-reused") || !res.BAliveAfter || res.SignalsToB != 0 {
		t.Errorf("plan for A, pid now B: %+v; want refused (pid-reused), no signal, B alive", res)
	}
	if res.Control.Outcome != "killed" {
		t.Errorf("control plan for B: %+v, want killed", res.Control)
	}
}

const envNSReap = "REAPER_TEST_PIDNS_REAP"

type nsReapResult struct {
	PID         int
	Reused      reapOutcome
	Control     reapOutcome
	BAliveAfter bool
	SignalsToB  int // signals that reached B (result ok) under A's plan
}

type reapOutcome struct{ Outcome, Detail string }

// ledger show with no path shows what scan reads: the clients' state dirs
// it finds, each read as its owner, and their ledgers. The control: with
// no state dir in reach, it says there is none and names the way to give
// one.
func TestLedgerShowDiscovers(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "acpx"), 0o700)
	leases, _ := json.Marshal(map[string]any{"version": 1, "leases": []any{map[string]any{
		"leaseId": "lease-show", "gatewayInstanceId": "gw", "sessionKey": "agent:codex:acp:1",
		"wrapperRoot": state + "/acpx", "wrapperPath": state + "/acpx/w.mjs",
		"rootPid": sleeper.Process.Pid, "commandHash": "h", "startedAt": time.Now().UnixMilli(), "state": "open"}}})
	os.WriteFile(filepath.Join(state, "acpx", "process-leases.json"), leases, 0o600)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "OPENCLAW_STATE_DIR=" + state}

	r := clitest.RunReaper(t, env, "ledger", "show", "-o", "json")
	var view struct {
		Ledgers []struct {
			Source string `json:"source"`
			Runs   []struct {
				ID string `json:"id"`
			} `json:"runs"`
		} `json:"ledgers"`
		StateDirs []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"state_dirs"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &view); err != nil || r.Code != 0 {
		t.Fatalf("ledger show: exit %d, %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	listed := false
	for _, d := range view.StateDirs {
		listed = listed || d.Path == state && d.Error == ""
	}
	found := false
	for _, l := range view.Ledgers {
		for _, run := range l.Runs {
			found = found || run.ID == "lease-show" && strings.HasPrefix(l.Source, state)
		}
	}
	if !listed || !found {
		t.Errorf("ledger show, no path: state dir listed and read %v, lease found %v\n%s", listed, found, r.Stdout)
	}

	if os.Geteuid() == 0 {
		return // root reads every home's state: this host's may hold some
	}
	r = clitest.RunReaper(t, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "OPENCLAW_STATE_DIR="}, "ledger", "show")
	if r.Code != 0 || !strings.Contains(r.Stdout, "No ledger found") || !strings.Contains(r.Stdout, "reaper ledger show PATH") {
		t.Errorf("control, no state: exit %d\n%s", r.Code, r.Stdout)
	}
}
