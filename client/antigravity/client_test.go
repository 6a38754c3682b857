package antigravity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/scan"
)

// antigravityDir is ~/.gemini/antigravity as its documentation writes it:
// a stdio server whose argv says nothing of MCP, and one by URL.
func antigravityDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".gemini", "antigravity")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, configFile), []byte(`{"mcpServers": {
  "quiet": {"command": "/opt/srv/quiet-helper", "args": ["--stdio"], "env": {"API_KEY": "x"}},
  "remote": {"serverUrl": "https://mcp.example/mcp"}}}`), 0o600)
	return dir
}

// A server the config declares, orphaned, is of kind mcp though its argv
// says nothing of MCP; the control: a command the config does not declare
// stays kind other. Neither is proven dead: the config names no process.
func TestDeclaredServerIsMCP(t *testing.T) {
	const uid = 1000
	quiet := clienttest.Proc(820, 1, 820, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	if f := clienttest.Finding(clienttest.Scan(t, Client, antigravityDir(t), uid, quiet), 820); f == nil || f.Kind != scan.KindMCP || f.Has(scan.OwnerDead) {
		t.Errorf("the declared server: %+v, want kind mcp, not owner-dead", f)
	}
	other := clienttest.Proc(820, 1, 820, uid, []string{"/opt/srv/other", "--stdio"}, nil)
	if f := clienttest.Finding(clienttest.Scan(t, Client, antigravityDir(t), uid, other), 820); f == nil || f.Kind != scan.KindOther {
		t.Errorf("control, not declared: %+v, want kind other", f)
	}
}
