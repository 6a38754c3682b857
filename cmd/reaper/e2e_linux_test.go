package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// The end-to-end suite runs reaper against a real Node gateway
// (testdata/e2e/gateway.mjs) that spawns PTYs through node-pty, a real MCP
// server over stdio through npm exec, and an ACP-shaped wrapper, and writes
// a v1 ledger and OpenClaw-style state. Every count is the kernel's: the
// live processes under each tree's root, read from /proc.

const e2eDir = "../../testdata/e2e"

// requireE2E finds node and the gateway's packages, installed from the
// committed lockfile by `make e2e-deps` (CI runs it): a test run never
// reaches the network, and without them these tests skip.
func requireE2E(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skips.Skip(t, "needs node and npm (CI installs them): the gateway under test is a Node program")
	}
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules", "@lydell", "node-pty")); err != nil {
		skips.Skip(t, "needs the e2e gateway's packages: run 'make e2e-deps' (npm ci in testdata/e2e) first")
	}
	return node
}

// e2eGateway is a running gateway.mjs.
type e2eGateway struct {
	cmd    *exec.Cmd
	state  string
	ledger string
	roots  map[string]int // pty, mcp, acp → root pid
	starts map[int]uint64 // root pid → start ticks at ready
	lines  chan map[string]any
}

func startE2EGateway(t *testing.T, node string, extra ...string) *e2eGateway {
	t.Helper()
	state := t.TempDir()
	return startE2EGatewayIn(t, node, state, extra...)
}

func startE2EGatewayIn(t *testing.T, node, state string, extra ...string) *e2eGateway {
	t.Helper()
	g := &e2eGateway{state: state, ledger: filepath.Join(state, "reaper-ledger.json"), lines: make(chan map[string]any, 8)}
	args := append([]string{"gateway.mjs", "--state", state, "--ledger", g.ledger}, extra...)
	g.cmd = exec.Command(node, args...)
	g.cmd.Dir = e2eDir
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a service of its own
	out, err := g.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	g.cmd.Stderr = &stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		g.cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				g.lines <- m
			}
		}
		close(g.lines)
	}()
	ready := g.await(t, "ready", 60*time.Second, &stderr)
	g.roots, g.starts = map[string]int{}, map[int]uint64{}
	for k, v := range ready["pids"].(map[string]any) {
		if k != "gateway" {
			g.roots[k] = int(v.(float64))
			g.starts[g.roots[k]], _ = clitest.StartTicks(g.roots[k])
		}
	}
	if ready["mcp"] != "secure-filesystem-server" {
		t.Fatalf("the MCP server did not initialize: %v", ready)
	}
	// The adapter the ACP wrapper starts must be up before counting.
	clitest.WaitFor(t, func() bool { return len(clitest.LiveTree(g.roots["acp"])) >= 2 }, "the ACP adapter")
	return g
}

func (g *e2eGateway) await(t *testing.T, key string, d time.Duration, stderr fmt.Stringer) map[string]any {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case m, ok := <-g.lines:
			if !ok {
				t.Fatalf("gateway exited before %q: %s", key, stderr)
			}
			if _, ok := m[key]; ok {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q from the gateway: %s", key, stderr)
		}
	}
}

// count is how many live processes the gateway's trees hold now, by tree;
// a root that is another process now counts as gone.
func (g *e2eGateway) count() (map[string]int, int) {
	by, total := map[string]int{}, 0
	for name, pid := range g.roots {
		if start, ok := clitest.StartTicks(pid); !ok || start != g.starts[pid] {
			by[name] = 0
			continue
		}
		by[name] = len(clitest.LiveTree(pid))
		total += by[name]
	}
	return by, total
}

func (g *e2eGateway) crash(t *testing.T) {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return clitest.ParentOf(g.roots["pty"]) == os.Getpid() }, "the PTY shell to be reparented")
}

func e2ePolicy(t *testing.T) string {
	t.Helper()
	return clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "3s"

[[owner]]
name = "e2e-gateway"
cmdline = 'e2e/gateway\.mjs|^\S*node gateway\.mjs'

%s
[[rule]]
name = "agent-leftovers"
when = ["reparented", "owner-dead", "run-done", "session-ended"]
kind = ["pty", "acp", "mcp"]
action = "terminate"
`, clitest.SelfSubreaper(t)))
}

func e2eReap(t *testing.T, args ...string) *clitest.ReapReport {
	t.Helper()
	rep, r := clitest.ReapJSON(t, args...)
	if r.Code != 0 {
		var why []string
		for _, f := range rep.Findings {
			if f.Outcome != "killed" && f.Outcome != "reported" {
				why = append(why, fmt.Sprintf("root %d (%s, rule %s): %s: %s", f.RootPID, f.Kind, f.Rule, f.Outcome, f.Detail))
			}
		}
		t.Fatalf("reap %v: exit %d: %s\n%s", args, r.Code, r.Stderr, strings.Join(why, "\n"))
	}
	return rep
}

func logCounts(t *testing.T, label string, by map[string]int, total int) {
	t.Helper()
	t.Logf("%-44s %3d processes  (pty %d, mcp %d, acp %d)", label, total, by["pty"], by["mcp"], by["acp"])
}

// Scenario 1: the gateway is SIGKILLed; reaper removes every tree it left,
// and a second gateway's identical trees live on. Scenario 5 is its
// dry-run: the plan lists every tree and nothing dies.
func TestE2EGatewayKilled(t *testing.T) {
	node := requireE2E(t)
	clitest.BecomeSubreaper(t)
	t.Cleanup(func() { killTreeVerifiedChildren() })
	dead, live := startE2EGateway(t, node), startE2EGateway(t, node)
	by, total := dead.count()
	logCounts(t, "gateway A, running", by, total)
	dead.crash(t)
	time.Sleep(time.Second)
	by, left := dead.count()
	logCounts(t, "gateway A SIGKILLed, 1 s later, no reaper", by, left)
	// What survives a gateway's death: what ignores hangup (the PTY's long
	// command) and what was detached from it (the ACP wrapper and adapter).
	// A stdio MCP server exits when its stdin closes with the gateway.
	if by["pty"] == 0 || by["acp"] < 2 {
		t.Fatalf("control: the orphans did not survive the gateway (%v)", by)
	}
	liveBy, liveTotal := live.count()
	logCounts(t, "gateway B, running", liveBy, liveTotal)

	t.Run("dry-run plans every tree, nothing dies", func(t *testing.T) {
		rep := e2eReap(t, "--dry-run", "--policy", e2ePolicy(t), "--ledger", dead.ledger, "--ledger", live.ledger)
		planned := map[int]bool{}
		for _, f := range rep.Findings {
			if f.Outcome == "planned" {
				planned[f.RootPID] = true
			}
		}
		for name, pid := range dead.roots {
			if by[name] > 0 && !planned[pid] {
				t.Errorf("dry-run: the %s tree (%d) is not planned: %+v", name, pid, rep.Findings)
			}
		}
		after, n := dead.count()
		logCounts(t, "after reaper reap --dry-run", after, n)
		if n != left {
			t.Errorf("dry-run: %d processes before, %d after", left, n)
		}
	})

	rep := e2eReap(t, "--policy", e2ePolicy(t), "--ledger", dead.ledger, "--ledger", live.ledger)
	by, n := dead.count()
	logCounts(t, "gateway A's trees after reaper reap", by, n)
	if n != 0 {
		t.Errorf("%d processes of the dead gateway survived: %v; findings %+v", n, by, rep.Findings)
	}
	liveBy2, liveTotal2 := live.count()
	logCounts(t, "gateway B after reaper reap", liveBy2, liveTotal2)
	if liveTotal2 < liveTotal || liveBy2["pty"] == 0 || liveBy2["mcp"] < 2 || liveBy2["acp"] < 2 {
		t.Errorf("the live gateway lost processes: %v → %v", liveBy, liveBy2)
	}
}

// Scenario 2: the gateway restarts and its startup hook runs reaper on the
// previous generation's ledger and state dir: the old trees are gone before
// the new generation spawns anything.
func TestE2ERestartHook(t *testing.T) {
	node := requireE2E(t)
	clitest.BecomeSubreaper(t)
	t.Cleanup(func() { killTreeVerifiedChildren() })
	old := startE2EGateway(t, node)
	old.crash(t)
	time.Sleep(time.Second)
	by, left := old.count()
	logCounts(t, "generation 1 SIGKILLed, no reaper", by, left)
	if left == 0 {
		t.Fatal("control: nothing survived generation 1")
	}
	next := startE2EGatewayIn(t, node, old.state, "--hook", clitest.Bin, "--policy", e2ePolicy(t))
	by, n := old.count()
	logCounts(t, "generation 1 when generation 2 is ready", by, n)
	if n != 0 {
		t.Errorf("the previous generation's processes outlived the startup hook: %v", by)
	}
	nb, nn := next.count()
	logCounts(t, "generation 2, running", nb, nn)
	if nb["pty"] == 0 || nb["mcp"] < 2 || nb["acp"] < 2 {
		t.Errorf("generation 2 is incomplete: %v", nb)
	}
}

// markedGateway starts a gateway, has it mark its state with sig (SIGUSR1:
// runs done; SIGUSR2: the parent session reset) without killing anything,
// and gives the processes a second to show they keep running.
func markedGateway(t *testing.T, sig syscall.Signal) *e2eGateway {
	t.Helper()
	node := requireE2E(t)
	clitest.BecomeSubreaper(t)
	t.Cleanup(func() { killTreeVerifiedChildren() })
	g := startE2EGateway(t, node)
	g.cmd.Process.Signal(sig)
	g.await(t, "marked", 10*time.Second, &strings.Builder{})
	time.Sleep(time.Second)
	return g
}

// Scenario 3: a session is marked done while its PTY (and MCP server) keep
// running: run-done, reaped, under a gateway that lives on.
func TestE2ERunDone(t *testing.T) {
	g := markedGateway(t, syscall.SIGUSR1)
	by, n := g.count()
	logCounts(t, "runs marked done, 1 s later, no reaper", by, n)
	if by["pty"] == 0 || by["mcp"] < 2 {
		t.Fatalf("control: the done runs' processes did not keep running (%v)", by)
	}
	rep := e2eReap(t, "--policy", e2ePolicy(t), "--ledger", g.ledger)
	by, n = g.count()
	logCounts(t, "after reaper reap", by, n)
	if by["pty"] != 0 || by["mcp"] != 0 {
		t.Errorf("the done runs' processes survived: %v; findings %+v", by, rep.Findings)
	}
	if by["acp"] < 2 || clitest.LiveTree(g.cmd.Process.Pid) == nil {
		t.Errorf("reaped more than the done runs: %v", by)
	}
}

// Scenario 4: a parent session is reset while its child ACP session lives:
// session-ended, reaped; the other session's runs live on.
func TestE2ESessionReset(t *testing.T) {
	g := markedGateway(t, syscall.SIGUSR2)
	by, n := g.count()
	logCounts(t, "parent session reset, 1 s later, no reaper", by, n)
	if by["acp"] < 2 {
		t.Fatalf("control: the child session's runtime did not keep running (%v)", by)
	}
	rep := e2eReap(t, "--policy", e2ePolicy(t), "--ledger", g.ledger)
	by, n = g.count()
	logCounts(t, "after reaper reap", by, n)
	if by["acp"] != 0 {
		t.Errorf("the child session's ACP tree survived: %v; findings %+v", by, rep.Findings)
	}
	if by["pty"] == 0 || by["mcp"] < 2 {
		t.Errorf("reaped another session's runs: %v", by)
	}
}

// killTreeVerifiedChildren kills everything below this test process (all
// of it started by this test, or adopted as its subreaper) but the suite's
// sentinels, each through a verified handle, and reaps what becomes its
// zombie.
func killTreeVerifiedChildren() {
	for _, pid := range clitest.LiveTree(os.Getpid())[1:] {
		if !clitest.IsSentinel(pid) {
			clitest.KillTreeVerified(pid)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range clitest.ChildrenOf(os.Getpid()) {
		if clitest.IsSentinel(pid) {
			continue
		}
		// SIGKILL is not instant: wait, bounded, so no zombie outlives the
		// test and ends up with PID 1.
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if wpid == pid || err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
