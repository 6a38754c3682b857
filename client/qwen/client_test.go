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
