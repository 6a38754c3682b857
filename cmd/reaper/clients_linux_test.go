package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The published agent clients, run offline against a model stand-in:
// scripts/install-npm.sh clients installs them (pinned by
// testdata/clients/package-lock.json) into a cache and prints where; CI
// passes that here.
const envClients = "REAPER_CLIENTS_DIR"

func requireClients(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	dir := os.Getenv(envClients)
	if dir == "" {
		t.Skipf("%s is not set: the real agent clients are not installed (scripts/install-npm.sh clients; CI runs it, and it skips only where npm can't be reached)", envClients)
	}
	return filepath.Join(dir, "node_modules")
}

// clientModel is the model stand-in the clients talk to: it takes every
// request (Anthropic Messages, OpenAI Responses and chat, Gemini) and
// holds it open — streaming headers sent, no answer — until the test
// ends: a turn in flight, the moment users kill a client in.
type clientModel struct {
	addr string
	mu   sync.Mutex
	seen []string // "METHOD PATH" of each request
	done chan struct{}
}

func startClientModel(t *testing.T) *clientModel {
	t.Helper()
	m := &clientModel{done: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { close(m.done); srv.Close() })
	return m
}

func (m *clientModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 16<<20))
	m.mu.Lock()
	m.seen = append(m.seen, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-m.done:
	case <-r.Context().Done():
	}
}

// turns is how many model requests have arrived.
func (m *clientModel) turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.seen {
		if strings.HasPrefix(s, "POST ") {
			n++
		}
	}
	return n
}

func (m *clientModel) requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, ", ")
}

// stubbornServers are the two MCP servers each client is given: one with
// "mcp" in its argv, one without (a helper of 9 MiB), both ignoring TERM,
// HUP and the end of stdin.
func stubbornServers(mark string) map[string][]string {
	script, _ := filepath.Abs("../../testdata/clients/stubborn-mcp.mjs")
	return map[string][]string{
		"stubborn": {"node", script, "--mcp-stubborn", mark},
		"helper":   {"node", script, "--helper", mark},
	}
}

// markedPIDs lists the live processes whose command line holds mark.
func markedPIDs(mark string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if s := stateOf(pid); s != "" && s != "Z" && strings.Contains(cmdlineOf(pid), mark) {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// killAll SIGKILLs the given pids, this test's own, each once.
func killAll(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// clientEnv is the environment every client runs with: a home of its own,
// PATH with Debian's node, and no proxy.
func clientEnv(home string, extra ...string) []string {
	return append([]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1"}, extra...)
}

// startDetached starts argv the way `nohup CMD &` in a terminal that is then
// closed leaves it: a job of its own (its own process group, in this
// test's session), whose shell has exited, so it is reparented to this
// test (the subreaper). It returns the pid, and SIGKILLs that group when
// the test ends.
func startDetached(t *testing.T, dir string, env []string, argv ...string) (int, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "client.log")
	sh := exec.Command("sh", append([]string{"-c", `set -m; "$@" </dev/null >"$LOG" 2>&1 & echo $!`, "sh"}, argv...)...)
	sh.Dir, sh.Env = dir, append(env, "LOG="+log)
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	var pid int
	fmt.Sscan(string(out), &pid)
	if pid <= 0 {
		t.Fatalf("start %v: no pid in %q", argv, out)
	}
	t.Cleanup(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	})
	return pid, log
}

// TestRealClaudeCode: Claude Code 2.1.197 as a detached one-shot job
// (`nohup claude -p … &`, its terminal closed), with two stubborn stdio
// MCP servers, its turn in flight. While it lives, `reaper reap` with the
// shipped example policy (its rules confined to this test's mark) signals
// nothing: its session file proves it live. SIGKILLed, it leaves both
// servers, reparented to this test (the control); the reap then finds each
// as owner-dead by the proof Claude Code left and kills it.
func TestRealClaudeCode(t *testing.T) {
	mods := requireClients(t)
	becomeSubreaper(t)
	mark := "ccmark" + strings.ReplaceAll(suiteMark, "-", "x")
	model := startClientModel(t)
	home, work := t.TempDir(), t.TempDir()
	cfgDir := filepath.Join(home, "claude-config")
	os.MkdirAll(cfgDir, 0o700)
	const key = "sk-ant-test-0123456789abcdefghijklmnopqrstuvwxyz"
	servers := map[string]any{}
	for name, argv := range stubbornServers(mark) {
		servers[name] = map[string]any{"type": "stdio", "command": argv[0], "args": argv[1:]}
	}
	cfg, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "mcpServers": servers}},
	})
	os.WriteFile(filepath.Join(cfgDir, ".claude.json"), cfg, 0o600)
	env := clientEnv(home, "CLAUDE_CONFIG_DIR="+cfgDir, "ANTHROPIC_BASE_URL=http://"+model.addr, "ANTHROPIC_API_KEY="+key,
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "IS_SANDBOX=1")
	claude, log := startDetached(t, work, env, filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), "-p", "say hello "+mark)
	t.Cleanup(func() { killAll(markedPIDs(mark)) })
	deadline := time.Now().Add(60 * time.Second)
	for len(markedPIDs(mark)) < 3 || model.turns() == 0 { // claude (its prompt holds the mark) and two servers
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("claude did not start both servers and a turn within 60 s: marked %v, requests %q\n%s", markedPIDs(mark), model.requests(), tail(b, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	var servers0 []int
	for _, pid := range markedPIDs(mark) {
		if pid != claude {
			servers0 = append(servers0, pid)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(cfgDir, "sessions", "*.json"))
	t.Logf("claude -p, detached: pid %d (parent %d), servers %v, session files %v, model requests %q", claude, parentOf(claude), servers0, sessions, model.requests())

	live, r := reapJSONEnv(t, nil, "--policy", examplePolicyForTest(t, mark))
	for _, f := range live.Findings {
		if f.RootPID == claude || slicesHas(f.PIDs, claude) {
			t.Errorf("a finding holds the live claude %d: %+v\n%s", claude, f, r.stdout)
		}
		if f.Outcome == "killed" || f.Outcome == "terminated" {
			t.Errorf("the live session's tree was signalled: %+v", f)
		}
	}
	if stateOf(claude) == "" || len(markedPIDs(mark)) != len(servers0)+1 {
		t.Fatalf("the live session lost processes to the reap: claude %q, marked %v", stateOf(claude), markedPIDs(mark))
	}
	t.Logf("live detached claude -p, reaper reap: %d findings, nothing signalled", len(live.Findings))

	syscall.Kill(claude, syscall.SIGKILL)
	var ws syscall.WaitStatus
	syscall.Wait4(claude, &ws, 0, nil)
	time.Sleep(2 * time.Second)
	left := markedPIDs(mark)
	for _, pid := range left {
		if parentOf(pid) != os.Getpid() {
			t.Errorf("server %d: parent %d, want this test (reparented)", pid, parentOf(pid))
		}
	}
	t.Logf("claude SIGKILLed, no reaper: %d of %d servers alive, reparented", len(left), len(servers0))
	if len(left) != len(servers0) {
		t.Fatalf("control: the stubborn servers did not outlive claude: %v of %v", left, servers0)
	}

	rep, r := reapJSONEnv(t, nil, "--policy", examplePolicyForTest(t, mark))
	for _, pid := range left {
		f := rep.finding(pid)
		if f == nil {
			t.Errorf("server %d: no finding\n%s", pid, r.stdout)
			continue
		}
		t.Logf("server %d %q: kind %s, rule %s, reasons %v, %s; evidence %q", pid, cmdlineOf(pid), f.Kind, f.Rule, f.Reasons, f.Outcome, f.Evidence)
		if f.Outcome != "killed" || !contains(f.Reasons, "owner-dead") || f.Rule != "agent-client-dead" {
			t.Errorf("server %d: %s by %q, reasons %v; want killed as owner-dead by agent-client-dead", pid, f.Outcome, f.Rule, f.Reasons)
		}
	}
	t.Logf("after reaper reap: %d servers alive", len(markedPIDs(mark)))
	if still := markedPIDs(mark); len(still) > 0 {
		t.Errorf("after reaper reap: %v alive", still)
	}
}

func slicesHas(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

