package gemini

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

func geminiDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".gemini")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{
  // Gemini CLI's settings allow comments
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "mcpServers": {
    "quiet": {"command": "/opt/srv/quiet-helper", "args": ["--stdio"]},
    "web": {"httpUrl": "https://example.com/mcp"},
  }
}`), 0o600)
	return dir
}

func TestReadSettings(t *testing.T) {
	raw := Adapter.Read(geminiDir(t))
	if len(raw.Servers) != 1 || raw.Servers[0].Name != "quiet" || len(raw.ConfigProblems) != 0 {
		t.Errorf("servers %+v, problems %v: want quiet only", raw.Servers, raw.ConfigProblems)
	}
}

// SIGKILL of the outer node leaves the relaunched node (with its servers)
// in the outer node's group: the whole tree is owner-dead, kind acp. A
// stubborn server left by a gemini -p that ended: owner-dead, kind mcp from
// the settings though its argv says nothing. Controls: the outer node
// alive; and the same server without Gemini's marker stays untracked.
func TestOrphans(t *testing.T) {
	const uid = 1000
	outer := clienttest.Proc(800, 500, 800, uid, []string{"node", "/usr/bin/gemini"}, nil)
	inner := clienttest.Proc(810, 1, 800, uid, []string{"node", "--max-old-space-size=4096", "/usr/bin/gemini"}, []string{"GEMINI_CLI_NO_RELAUNCH=true"})
	server := clienttest.Proc(820, 1, 800, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{"GEMINI_CLI=1"})
	bare := clienttest.Proc(830, 1, 800, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	for _, tc := range []struct {
		name    string
		procs   []platform.Process
		root    int
		kind    scan.Kind
		reasons []scan.Reason
	}{
		{"the relaunched node", []platform.Process{inner}, 810, scan.KindACP, []scan.Reason{scan.Reparented, scan.OwnerDead}},
		{"a stubborn server", []platform.Process{server}, 820, scan.KindMCP, []scan.Reason{scan.Reparented, scan.OwnerDead}},
		{"control: the outer node lives", []platform.Process{outer, server}, 820, scan.KindMCP, []scan.Reason{scan.Reparented}},
		{"control: no marker", []platform.Process{bare}, 830, scan.KindMCP, []scan.Reason{scan.Reparented, scan.Untracked}},
	} {
		f := clienttest.Finding(clienttest.Scan(t, Client, geminiDir(t), uid, tc.procs...), tc.root)
		if f == nil || f.Kind != tc.kind || !reflect.DeepEqual(f.Reasons, tc.reasons) {
			t.Errorf("%s: finding %+v, want kind %s, reasons %v", tc.name, f, tc.kind, tc.reasons)
		}
	}
}
