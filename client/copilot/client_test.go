package copilot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/scan"
)

// copilotDir is ~/.copilot as `copilot mcp add` leaves it: a local server
// and a remote one, which runs nothing here.
func copilotDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".copilot")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "mcp-config.json"), []byte(`{"mcpServers": {
  "quiet": {"type": "local", "command": "/opt/srv/quiet-helper", "args": ["--stdio"], "tools": ["*"]},
  "web": {"type": "http", "url": "https://example.com/mcp"}
}}`), 0o600)
	return dir
}

// COPILOT_LOADER_PID names the native copilot: gone, the session is over;
// the local server's kind comes from the config, the remote one is none.
func TestLoaderMark(t *testing.T) {
	dir := copilotDir(t)
	clienttest.PIDMarkCases(t, Client, dir, EnvPID, OwnerName)
	if raw := (Adapter{}).Read(dir); len(raw.Servers) != 1 || raw.Servers[0].Name != "quiet" {
		t.Errorf("servers %+v, want the local one alone", raw.Servers)
	}
	server := clienttest.Proc(820, 1, 800, 1000, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{EnvPID + "=810"})
	if f := clienttest.Finding(clienttest.Scan(t, Client, dir, 1000, server), 820); f == nil || f.Kind != scan.KindMCP {
		t.Errorf("the config's server: %+v, want kind mcp", f)
	}
}

// Headless: the CLI left running once what the user typed is gone, with no
// terminal to reach it by: its tree is owner-dead (clienttest.HeadlessCases,
// with its controls).
func TestHeadless(t *testing.T) {
	clienttest.HeadlessCases(t, Client, copilotDir(t), []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot"}, OwnerName)
}
