package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// gatewayTrees is what a fake OpenClaw gateway spawns, as OpenClaw spawns
// it: a PTY shell of the exec tool with a long-running child; a detached
// (setsid) MCP wrapper with the real server as grandchild; an ACP wrapper
// in the gateway's group whose adapter leads its own group.
func gatewayTrees() []clitest.SpawnSpec {
	return []clitest.SpawnSpec{
		{
			Args: []string{"/bin/bash", "-c", "npm test -- --watch"}, Env: []string{"OPENCLAW_SHELL=exec"}, PTY: true,
			Children: []clitest.SpawnSpec{{Args: []string{"node", "node_modules/.bin/jest", "--watch"}}},
		},
		{
			Args: []string{"npm exec @modelcontextprotocol/server-everything"}, Setsid: true,
			Children: []clitest.SpawnSpec{{Args: []string{"node", "/usr/lib/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}}},
		},
		{
			Args: []string{"/usr/bin/node", "/home/alice/.openclaw/acpx/claude-agent-acp-wrapper.mjs", "--openclaw-acpx-lease-id", "lease-7"},
			Env:  []string{"OPENCLAW_SHELL=acp"},
			Children: []clitest.SpawnSpec{{
				Args: []string{"node", "/home/alice/.openclaw/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"}, Setpgid: true,
				Children: []clitest.SpawnSpec{{Args: []string{"claude", "--mcp-config", "/tmp/openclaw-mcp.json"}}},
			}},
		},
	}
}

// helperCount is how many processes a gateway and its trees make.
func helperCount(specs []clitest.SpawnSpec) int {
	n := 0
	for _, s := range specs {
		n += 1 + helperCount(s.Children)
	}
	return n
}

// fakeGateway is a running gateway helper and the helpers below it.
type fakeGateway struct {
	cmd  *exec.Cmd
	pids map[int]uint64 // pid → start ticks of every helper below it, and its own
	dir  string
}

// startGateway starts a fake gateway whose argv the test policy's owner
// matches, and waits until it and all its trees have registered.
func startGateway(t *testing.T, port string) *fakeGateway {
	t.Helper()
	return startGatewayWith(t, port, gatewayTrees())
}

// startGatewayWith starts a fake gateway with the given trees.
func startGatewayWith(t *testing.T, port string, trees []clitest.SpawnSpec) *fakeGateway {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(clitest.SpawnSpec{Children: trees})
	g := &fakeGateway{dir: dir, cmd: exec.Command(self)}
	g.cmd.Args = []string{"node", "/opt/openclaw/dist/entry.js", "gateway", "--port", port}
	g.cmd.Env = append(os.Environ(), clitest.EnvSpec+"="+string(spec), clitest.EnvPIDDir+"="+dir)
	// Children carry the gateway's pid the way a service-mode gateway sets
	// it; it is filled in below, once the pid is known, through the helpers'
	// own environment: the gateway helper exports it before spawning.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := 1 + helperCount(trees)
	t.Cleanup(func() { g.cleanup(t) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.pids = readPIDDir(t, dir)
		if len(g.pids) == want {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway on port %s: %d of %d helpers registered", port, len(g.pids), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPIDDir(t *testing.T, dir string) map[int]uint64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]uint64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		start, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		pids[pid] = start
	}
	return pids
}

// cleanup SIGKILLs every helper this gateway started that is still the
// process it registered as, then reaps those that became our children.
func (g *fakeGateway) cleanup(t *testing.T) {
	for pid, start := range g.pids {
		clitest.KillVerified(pid, start)
	}
	g.cmd.Process.Kill()
	g.cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for pid := range g.pids {
		for time.Now().Before(deadline) {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) || wpid == pid {
				break // not our child (its parent reaps it) or reaped now
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// integrationPolicy names this test process as the subreaper and the fake
// gateways as owners.
func integrationPolicy(t *testing.T) string {
	t.Helper()
	pol := `version = 1
[[owner]]
name = "fake-gateway"
cmdline = 'dist/entry\.js gateway'

` + clitest.SelfSubreaper(t) + `

[[rule]]
name = "orphaned-pty"
when = ["reparented"]
kind = ["pty"]

[[rule]]
name = "orphaned-mcp"
when = ["reparented"]
kind = ["mcp"]

[[rule]]
name = "orphaned-acp"
when = ["reparented"]
kind = ["acp"]
`
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(clitest.MarkRules(pol)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIntegrationGatewayKilled: a gateway is SIGKILLed; its PTY, MCP and ACP
// trees are reparented to the subreaper (this test); `reaper scan` must
// report every one of their roots with `reparented`, and none of the
// identical trees of a second, live gateway.
func TestIntegrationGatewayKilled(t *testing.T) {
	clitest.BecomeSubreaper(t)
	dead := startGateway(t, "18789")
	live := startGateway(t, "18790")

	roots := map[int]string{} // the dead gateway's direct children: the roots to find
	for pid := range dead.pids {
		if clitest.ParentOf(pid) == dead.cmd.Process.Pid {
			roots[pid] = ""
		}
	}
	if len(roots) != 3 {
		t.Fatalf("dead gateway has %d children, want 3", len(roots))
	}
	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	dead.cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for pid := range roots {
		for clitest.ParentOf(pid) != os.Getpid() {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d not reparented to the test (parent %d)", pid, clitest.ParentOf(pid))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	r := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", integrationPolicy(t))
	if r.Code != 0 {
		t.Fatalf("reaper scan: exit %d\n%s", r.Code, r.Stderr)
	}
	var rep struct {
		Findings []struct {
			RootPID int      `json:"root_pid"`
			PIDs    []int    `json:"pids"`
			Kind    string   `json:"kind"`
			Reasons []string `json:"reasons"`
			Rule    string   `json:"rule"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	covered := map[int]bool{}
	kinds := map[string]bool{}
	for _, f := range rep.Findings {
		for _, pid := range f.PIDs {
			covered[pid] = true
			if _, ok := live.pids[pid]; ok {
				t.Errorf("finding %d (%s) covers pid %d of the live gateway", f.RootPID, f.Rule, pid)
			}
		}
		if _, ok := roots[f.RootPID]; ok {
			kinds[f.Kind] = true
			if !clitest.Contains(f.Reasons, "reparented") {
				t.Errorf("finding %d: reasons %v lack reparented", f.RootPID, f.Reasons)
			}
		}
	}
	for pid := range dead.pids {
		if pid != dead.cmd.Process.Pid && !covered[pid] {
			t.Errorf("orphan %d (%s) is in no finding", pid, clitest.CmdlineOf(pid))
		}
	}
	for _, k := range []string{"pty", "mcp", "acp"} {
		if !kinds[k] {
			t.Errorf("no %s finding among the dead gateway's roots; findings: %+v", k, rep.Findings)
		}
	}
	if t.Failed() {
		for pid := range roots {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			link, lerr := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
			t.Logf("root %d: %.60s stdin %s %v %s", pid, b, link, lerr, clitest.CmdlineOf(pid))
		}
		t.Logf("reaper output:\n%s", r.Stdout)
	}
}
