package opencode

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

func configDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "opencode")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "opencode.jsonc"), []byte(`{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "quiet": {"type": "local", "command": ["/opt/srv/quiet-helper", "--stdio"], "enabled": true},
    "web": {"type": "remote", "url": "https://example.com/mcp"}, // no process
  },
}`), 0o600)
	return dir
}

func TestReadConfig(t *testing.T) {
	raw := Adapter.Read(configDir(t))
	if len(raw.Servers) != 1 || raw.Servers[0].Command != "/opt/srv/quiet-helper" || !reflect.DeepEqual(raw.Servers[0].Args, []string{"--stdio"}) {
		t.Errorf("servers %+v (problems %v), want quiet only", raw.Servers, raw.ConfigProblems)
	}
}

// SIGKILL of opencode leaves its stubborn server, which carries
// OPENCODE_PID and its process group: owner-dead, kind mcp from the config.
// Control: opencode alive.
func TestOrphanedServer(t *testing.T) {
	const uid = 1000
	server := clienttest.Proc(920, 1, 900, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{"OPENCODE=1", "OPENCODE_PID=900"})
	live := clienttest.Proc(900, 500, 900, uid, []string{"opencode"}, nil)
	for _, tc := range []struct {
		name    string
		procs   []platform.Process
		reasons []scan.Reason
	}{
		{"opencode is gone", []platform.Process{server}, []scan.Reason{scan.Reparented, scan.OwnerDead}},
		{"control: opencode lives", []platform.Process{live, server}, []scan.Reason{scan.Reparented}},
	} {
		f := clienttest.Finding(clienttest.Scan(t, Client, configDir(t), uid, tc.procs...), 920)
		if f == nil || f.Kind != scan.KindMCP || f.Owner != OwnerName || !reflect.DeepEqual(f.Reasons, tc.reasons) {
			t.Errorf("%s: finding %+v, want kind mcp, owner opencode, reasons %v", tc.name, f, tc.reasons)
		}
	}
}
