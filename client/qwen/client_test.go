package qwen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/scan"
)

// qwenDir is ~/.qwen as the offline set-up writes it: an OpenAI-compatible
// auth and one stdio server, whose command names nothing MCP.
func qwenDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".qwen")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{
  "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true},
  "mcpServers": {"quiet": {"command": "/opt/srv/quiet-helper", "args": ["--stdio"]}}
}`), 0o600)
	return dir
}

// QWEN_CODE_LAUNCHER_PID names the launcher: gone, the session is over;
// the server's kind comes from the settings.
func TestLauncherMark(t *testing.T) {
	dir := qwenDir(t)
	clienttest.PIDMarkCases(t, Client, dir, EnvLauncher, OwnerName)
	server := clienttest.Proc(820, 1, 800, 1000, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{EnvLauncher + "=800"})
	if f := clienttest.Finding(clienttest.Scan(t, Client, dir, 1000, server), 820); f == nil || f.Kind != scan.KindMCP {
		t.Errorf("the settings' server: %+v, want kind mcp", f)
	}
}

// Headless: the CLI left running once what the user typed is gone, with no
// terminal to reach it by: its tree is owner-dead (clienttest.HeadlessCases,
// with its controls).
func TestHeadless(t *testing.T) {
	clienttest.HeadlessCases(t, Client, qwenDir(t), []string{"node", "/usr/lib/node_modules/@qwen-code/qwen-code/cli.js"}, OwnerName)
}

// QWEN_HOME names Qwen Code's dir itself, in a process's environment and
// in reaper's own; a relative one names nothing (the reader's cwd is not
// the process's). The control: without it, nothing is named.
func TestQwenHome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-qwen")
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	if got, from := Adapter.NamedDir(env(map[string]string{EnvHome: dir + string(filepath.Separator)})); got != dir || from != EnvHome {
		t.Errorf("named %q by %q, want %q by %s", got, from, dir, EnvHome)
	}
	if got, _ := Adapter.NamedDir(env(map[string]string{EnvHome: "rel/qwen"})); got != "" {
		t.Errorf("a relative QWEN_HOME named %q", got)
	}
	if got, _ := Adapter.NamedDir(env(nil)); got != "" {
		t.Errorf("control: no QWEN_HOME named %q", got)
	}
	if got := Adapter.OwnDirs(func(k string) string { v, _ := env(map[string]string{EnvHome: dir})(k); return v }); len(got) != 1 || got[0] != dir {
		t.Errorf("reaper's own QWEN_HOME: %q, want %q", got, dir)
	}
}
