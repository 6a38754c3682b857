//go:build linux

package realclients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// root is the module's root, where testdata is: this file's folder's
// grandparent, however the test that calls it was run.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// stateOf is pid's state letter, "" when it is gone.
func stateOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	return f[0]
}

// parentOf is pid's parent now, -1 when it is gone.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	var ppid int
	fmt.Sscan(strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))[1], &ppid)
	return ppid
}

// cmdlineOf is pid's command line, its arguments joined by spaces.
func cmdlineOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// GeminiSetup writes Gemini CLI's settings under home (the two stubborn
// servers) and returns its environment, the model stand-in at addr.
func GeminiSetup(home, addr, mark string) []string {
	WriteGeminiSettings(home, mark)
	return Env(home, "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=http://"+addr, "GEMINI_CLI_TRUST_WORKSPACE=true")
}

// CodexRecord is the pid a Codex daemon record names in codexHome
// (app-server-daemon/NAME), or 0 when there is none.
func CodexRecord(codexHome, name string) int {
	var rec struct {
		PID int `json:"pid"`
	}
	b, _ := os.ReadFile(filepath.Join(codexHome, "app-server-daemon", name))
	if json.Unmarshal(b, &rec) != nil {
		return 0
	}
	return rec.PID
}

// StubbornServers are the two MCP servers each client is given: one with
// "mcp" in its argv, one without (a helper of 9 MiB), both ignoring TERM,
// HUP and the end of stdin.
func StubbornServers(mark string) map[string][]string {
	script := filepath.Join(root(), "testdata", "clients", "stubborn-mcp.mjs")
	return map[string][]string{
		"stubborn": {"node", script, "--mcp-stubborn", mark},
		"helper":   {"node", script, "--helper", mark},
	}
}

// MarkedPIDs lists the live processes whose command line holds mark.
func MarkedPIDs(mark string) []int {
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

// KillOurs SIGKILLs what the test started and left: the processes holding
// mark that descend from this test (the subreaper every orphan of its
// clients comes back to), and nothing else that may hold the same text.
func KillOurs(mark string) {
	for _, pid := range MarkedPIDs(mark) {
		for q, hops := parentOf(pid), 0; q > 1 && hops < 64; q, hops = parentOf(q), hops+1 {
			if q == os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}

// Env is the environment every client runs with: a home of its own,
// PATH with Debian's node, no proxy, and npm offline. A client that
// installs packages on its first start does it with npm's code, which
// reads npm's config from the environment: OpenCode 1.18 adds
// @opencode-ai/plugin to a fresh config dir (26 connections to the
// registry, measured with strace); offline, with the registry at a closed
// local port besides, it finds nothing to fetch and runs on without it.
func Env(home string, extra ...string) []string {
	return append([]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		"npm_config_offline=true", "npm_config_registry=http://127.0.0.1:9/"}, extra...)
}

// StartDetached starts argv the way `nohup CMD &` in a terminal that is then
// closed leaves it: a job of its own (bash with job control gives it its
// own process group, in this
// test's session), whose shell has exited, so it is reparented to this
// test (the subreaper). It returns the pid, and SIGKILLs that group when
// the test ends.
func StartDetached(t testing.TB, dir string, env []string, argv ...string) (int, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "client.log")
	sh := exec.Command("bash", append([]string{"-c", `set -m; "$@" </dev/null >"$LOG" 2>&1 & echo $!`, "bash"}, argv...)...)
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

// ClaudeSetup writes Claude Code's config under home for a session in
// work — onboarded, its key approved, work trusted, the two stubborn
// servers — and returns its environment (the model stand-in at addr) and
// its config dir.
func ClaudeSetup(home, work, addr, mark string) ([]string, string) {
	cfgDir := filepath.Join(home, "claude-config")
	os.MkdirAll(cfgDir, 0o700)
	const key = "sk-ant-test-0123456789abcdefghijklmnopqrstuvwxyz"
	servers := map[string]any{}
	for name, argv := range StubbornServers(mark) {
		servers[name] = map[string]any{"type": "stdio", "command": argv[0], "args": argv[1:]}
	}
	cfg, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "mcpServers": servers}},
	})
	os.WriteFile(filepath.Join(cfgDir, ".claude.json"), cfg, 0o600)
	return Env(home, "CLAUDE_CONFIG_DIR="+cfgDir, "ANTHROPIC_BASE_URL=http://"+addr, "ANTHROPIC_API_KEY="+key,
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "IS_SANDBOX=1"), cfgDir
}

// KiloSetup writes Kilo's config under home — OpenCode's format, in
// ~/.config/kilo/kilo.json: the model stand-in at addr, the two stubborn
// servers — and returns its environment, with what turns off its network
// calls.
func KiloSetup(home, addr, mark string) []string {
	writeOpenCodeFormat(filepath.Join(home, ".config", "kilo", "kilo.json"), "https://kilo.ai/config.json", addr, mark,
		map[string]any{"name": "m", "tool_call": true})
	return Env(home, "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_DEFAULT_PLUGINS=1",
		"KILO_DISABLE_SHARE=1", "KILO_TELEMETRY_LEVEL=off", "KILO_DISABLE_SESSION_INGEST=1", "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
}

// writeOpenCodeFormat writes a config in OpenCode's format (which Kilo
// keeps) at path: the model stand-in at addr as an OpenAI-compatible
// provider whose one model is model, no update, no sharing, and the two
// stubborn servers.
func writeOpenCodeFormat(path, schema, addr, mark string, model map[string]any) {
	mcp := map[string]any{}
	for name, argv := range StubbornServers(mark) {
		mcp[name] = map[string]any{"type": "local", "command": argv, "enabled": true}
	}
	cfg, _ := json.Marshal(map[string]any{
		"$schema": schema,
		"provider": map[string]any{"mock": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "mock",
			"options": map[string]any{"baseURL": "http://" + addr + "/v1", "apiKey": "test-key"},
			"models":  map[string]any{"m": model}}},
		"model":      "mock/m",
		"autoupdate": false,
		"share":      "disabled",
		"mcp":        mcp,
	})
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, cfg, 0o600)
}

// CopilotSetup writes Copilot CLI's config under home for a session in
// work — work trusted, no banner, no update, the two stubborn servers as
// `copilot mcp add` writes them — and returns its environment: the model
// stand-in at addr as an OpenAI provider, offline, no GitHub login.
func CopilotSetup(home, work, addr, mark string) []string {
	servers := map[string]any{}
	for name, argv := range StubbornServers(mark) {
		servers[name] = map[string]any{"type": "local", "command": argv[0], "args": argv[1:], "tools": []string{"*"}}
	}
	dir := filepath.Join(home, ".copilot")
	os.MkdirAll(dir, 0o700)
	mcp, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.WriteFile(filepath.Join(dir, "mcp-config.json"), mcp, 0o600)
	cfg, _ := json.Marshal(map[string]any{"trusted_folders": []string{work}, "banner": "never", "autoUpdate": false})
	os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600)
	return Env(home, "COPILOT_PROVIDER_BASE_URL=http://"+addr+"/v1", "COPILOT_PROVIDER_TYPE=openai", "COPILOT_PROVIDER_API_KEY=test-key",
		"COPILOT_MODEL=m", "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false")
}

// OpenCodeSetup writes OpenCode's config under home — the model stand-in
// at addr as an OpenAI-compatible provider, the two stubborn servers —
// and returns its environment.
func OpenCodeSetup(home, addr, mark string) []string {
	writeOpenCodeFormat(filepath.Join(home, ".config", "opencode", "opencode.json"), "https://opencode.ai/config.json", addr, mark,
		map[string]any{"name": "m"})
	return Env(home, "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
}

// WriteGeminiSettings writes the ~/.gemini/settings.json the Gemini CLI
// tests run with: the API-key auth, no folder trust, no update checks, and
// the stubborn servers.
func WriteGeminiSettings(home, mark string) {
	servers := map[string]any{}
	for name, argv := range StubbornServers(mark) {
		servers[name] = map[string]any{"command": argv[0], "args": argv[1:], "trust": true}
	}
	settings, _ := json.Marshal(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"mcpServers": servers,
	})
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600)
}

// WriteCodexConfig writes CODEX_HOME's config.toml: the model stand-in at
// addr (OpenAI Responses), work trusted, and the two stubborn servers.
func WriteCodexConfig(codexHome, work, addr, mark string) {
	os.MkdirAll(codexHome, 0o700)
	var toml strings.Builder
	fmt.Fprintf(&toml, "model = \"m\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://%s/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n", addr)
	fmt.Fprintf(&toml, "[projects.%q]\ntrust_level = \"trusted\"\n", work)
	for name, argv := range StubbornServers(mark) {
		q := make([]string, len(argv)-1)
		for i, a := range argv[1:] {
			q[i] = fmt.Sprintf("%q", a)
		}
		fmt.Fprintf(&toml, "[mcp_servers.%s]\ncommand = %q\nargs = [%s]\n", name, "/usr/bin/node", strings.Join(q, ", "))
	}
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml.String()), 0o600)
}

// ClineSetup configures Cline (bin, its native binary) under home as its
// own commands do — the model stand-in at addr as an OpenAI-compatible
// provider (cline auth), the stubborn servers (cline mcp add), its
// promotions marked shown (else one eats the first key) — and returns its
// environment. Its hub daemon gets a port of its own (CLINE_HUB_PORT):
// on the default one, a hub another test or the machine's user left
// running would be reused. The hub a client run in work starts is
// SIGKILLed when the test ends (it outlives cline by design).
func ClineSetup(t testing.TB, bin, home, work, addr, mark string, servers ...string) []string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	env := Env(home, "CLINE_HUB_PORT="+strconv.Itoa(port))
	t.Cleanup(func() { killHub(work) })
	cmds := [][]string{{"auth", "-p", "openai-compatible", "-k", "sk-test", "-m", "m", "-b", "http://" + addr + "/v1"}}
	all := StubbornServers(mark)
	for _, name := range servers {
		cmds = append(cmds, append([]string{"mcp", "add", "--yes", name, "--"}, all[name]...))
	}
	for _, args := range cmds {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cline %s: %v\n%s", args[0], err, out)
		}
	}
	os.WriteFile(filepath.Join(home, ".cline", "data", "settings", "cli-notices.json"),
		[]byte(`{"shown": {"cline-cli-cline-pass-intro": true, "cline-cli-desktop-launch": true}}`), 0o600)
	return env
}

// ClineHub is the pid the hub lock under home names, or 0.
func ClineHub(home string) int {
	var rec struct {
		PID int `json:"pid"`
	}
	b, _ := os.ReadFile(filepath.Join(home, ".cline", "data", "locks", "hub", "production.json"))
	if json.Unmarshal(b, &rec) != nil {
		return 0
	}
	return rec.PID
}

// QwenSetup writes Qwen Code's settings under home — the model stand-in at
// addr as an OpenAI-compatible provider, folder trust and updates off, the
// two stubborn servers — and returns its environment, with node (Qwen
// needs 22 or later) first on PATH.
func QwenSetup(home, addr, mark, node string) []string {
	servers := map[string]any{}
	for name, argv := range StubbornServers(mark) {
		servers[name] = map[string]any{"command": argv[0], "args": argv[1:]}
	}
	dir := filepath.Join(home, ".qwen")
	os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"model":      map[string]any{"name": "m"},
		"mcpServers": servers,
	})
	os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600)
	env := Env(home, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=http://"+addr+"/v1", "OPENAI_MODEL=m")
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + filepath.Dir(node) + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	return env
}

// killHub SIGKILLs the Cline hub daemons started for work (their argv
// names it: --cwd WORK), and nothing else.
func killHub(work string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmd := cmdlineOf(pid); strings.Contains(cmd, "--cline-hub-daemon") && strings.Contains(cmd, "--cwd "+work+" ") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// PiSetup writes pi's agent dir under home — a provider at the model
// stand-in (OpenAI chat completions) with one model, m — and returns its
// environment, offline (no version check, no package fetch).
func PiSetup(home, addr string) []string {
	dir := filepath.Join(home, ".pi", "agent")
	os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(map[string]any{"providers": map[string]any{"local": map[string]any{
		"baseUrl": "http://" + addr + "/v1", "api": "openai-completions", "apiKey": "test-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "m"}}}}})
	os.WriteFile(filepath.Join(dir, "models.json"), b, 0o600)
	return Env(home, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1")
}

// ContinueSetup writes Continue's config.yaml under home — a model at the
// stand-in (an OpenAI-compatible apiBase) and the two stubborn servers —
// and returns cn's environment, its telemetry off.
func ContinueSetup(home, addr, mark string) []string {
	dir := filepath.Join(home, ".continue")
	os.MkdirAll(dir, 0o700)
	var b strings.Builder
	fmt.Fprintf(&b, "name: local\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: m\n    provider: openai\n    model: m\n    apiBase: http://%s/v1\n    apiKey: test-key\n    roles: [chat]\nmcpServers:\n", addr)
	servers := StubbornServers(mark)
	for _, name := range []string{"helper", "stubborn"} {
		argv := servers[name]
		args, _ := json.Marshal(argv[1:])
		fmt.Fprintf(&b, "  - name: %s\n    command: %s\n    args: %s\n", name, argv[0], args)
	}
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(b.String()), 0o600)
	return Env(home, "CONTINUE_CLI_ENABLE_TELEMETRY=0", "CONTINUE_METRICS_ENABLED=0")
}
