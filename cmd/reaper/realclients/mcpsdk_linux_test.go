package realclients

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealMCPSDKProbeCopies: the MCP TypeScript SDK v2
// (@modelcontextprotocol/client 2.4.0), in its "auto" version negotiation,
// starts a disposable copy of a stdio server on every connect to probe the
// protocol era, and reaps it before the connect returns: stdin closed,
// SIGTERM, a second, SIGKILL (negotiateStdioViaSibling). A client connects
// four times to the stubborn server while reaper reaps with the example
// policy, its rules confined to this test's mark, again and again: no
// probe copy, and no session copy, is ever a finding, and all four
// sessions' servers live after. The control: the probe copies were there
// to be seen (more servers than sessions came and went); in "legacy", the
// SDK's default, none is started.
func TestRealMCPSDKProbeCopies(t *testing.T) {
	sdk := requireInstalled(t, envMCPSDK, "the MCP TypeScript SDK v2", "scripts/install-npm.sh mcpsdk", filepath.Join("node_modules", "@modelcontextprotocol", "client"))
	// The client script beside the SDK's node_modules, as an ESM import
	// resolves it.
	dir := t.TempDir()
	code, err := os.ReadFile(filepath.Join(clitest.Root(), "testdata", "mcpsdk", "connect.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "connect.mjs"), code, 0o644)
	if err := os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(clitest.Root(), "testdata", "clients", "stubborn-mcp.mjs")
	for _, mode := range []string{"auto", "legacy"} {
		t.Run(mode, func(t *testing.T) { sdkProbes(t, dir, server, mode) })
	}
}

func sdkProbes(t *testing.T, dir, server, mode string) {
	mark := "sdkmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + mode
	const sessions = 4
	cmd := exec.Command("node", filepath.Join(dir, "connect.mjs"), server, "4", mark, mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		realclients.KillOurs(mark)
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
			}
		}
	}()
	// Every server process of this test's ever seen, sampled every 20 ms
	// (a probe copy lives about a second).
	var mu sync.Mutex
	seen := map[int]bool{}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			for _, pid := range realclients.MarkedPIDs(mark) {
				if strings.Contains(clitest.CmdlineOf(pid), "--mcp-sdk") {
					mu.Lock()
					seen[pid] = true
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// The example policy, every rule confined to this test's mark; this
	// test is no subreaper (the client is its child, as a shell's is), and
	// its cleanup ends the client's group, servers and all.
	b, err := os.ReadFile(filepath.Join(clitest.Root(), "packaging/policy.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(t.TempDir(), "policy.toml")
	text := strings.Replace(string(b), `min_age = "2m"`, `min_age = "0s"`, 1)
	os.WriteFile(pol, []byte(strings.ReplaceAll(text, "[[rule]]", "[[rule]]\ncmdline = '"+mark+"'")), 0o644)
	reaps := 0
	var found []clitest.ReapFinding // every reap's findings, matched against what was seen
	deadline := time.After(2 * time.Minute)
	for done := false; !done; {
		rep, _ := clitest.ReapJSONEnv(t, nil, "--policy", pol)
		reaps++
		found = append(found, rep.Findings...)
		select {
		case <-ready:
			done = true
		case <-deadline:
			t.Fatalf("the client did not connect %d times within 2 minutes; servers seen %v", sessions, seen)
		default:
		}
	}
	close(stop)
	<-sampled
	client := cmd.Process.Pid
	for _, f := range found {
		for _, pid := range append([]int{f.RootPID}, f.PIDs...) {
			if seen[pid] || pid == client {
				t.Errorf("a finding holds the live client's %d: root %d, %s by %q, reasons %v, evidence %q", pid, f.RootPID, f.Outcome, f.Rule, f.Reasons, f.Evidence)
			}
		}
	}
	var live []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if strings.Contains(clitest.CmdlineOf(pid), "--mcp-sdk") && clitest.Alive(pid) && clitest.ParentOf(pid) == client {
			live = append(live, pid)
		}
	}
	probes := len(seen) - len(live)
	t.Logf("%s: %d reaps while it connected; %d servers seen, %d of them its sessions' (alive), %d probe copies", mode, reaps, len(seen), len(live), probes)
	if len(live) != sessions {
		t.Errorf("%s: %d session servers alive after the reaps, want %d", mode, len(live), sessions)
	}
	switch {
	case mode == "auto" && probes < 1:
		t.Errorf("control: in auto, no probe copy was seen (%d servers for %d sessions)", len(seen), sessions)
	case mode == "legacy" && probes != 0:
		t.Errorf("legacy: %d servers seen for %d sessions, want no probe copy", len(seen), sessions)
	}
}
