package kilo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/client/opencode"
	"github.com/orphanreaper/reaper/scan"
)

// kiloDir is ~/.config/kilo as the offline set-up writes it, in OpenCode's
// format.
func kiloDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".config", "kilo")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "kilo.json"), []byte(`{"autoupdate": false, "share": "disabled",
  "mcp": {"quiet": {"type": "local", "command": ["/opt/srv/quiet-helper", "--stdio"]}}}`), 0o600)
	return dir
}

// KILO_PID names .kilo, which does not lead its group (the node wrapper
// does): gone, the session is over. Kilo also sets OPENCODE=1 but no
// OPENCODE_PID: OpenCode's adapter says nothing of its servers.
func TestKiloPIDMark(t *testing.T) {
	dir := kiloDir(t)
	clienttest.PIDMarkCases(t, Client, dir, EnvPID, OwnerName)
	server := clienttest.Proc(820, 1, 800, 1000, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{EnvPID + "=810", "KILO=1", "OPENCODE=1"})
	if f := clienttest.Finding(clienttest.Scan(t, Client, dir, 1000, server), 820); f == nil || f.Kind != scan.KindMCP || !f.Has(scan.OwnerDead) {
		t.Errorf("the config's server: %+v, want kind mcp, owner-dead", f)
	}
	if f := clienttest.Finding(clienttest.Scan(t, opencode.Client, dir, 1000, server), 820); f == nil || f.Has(scan.OwnerDead) {
		t.Errorf("OpenCode's adapter on Kilo's server: %+v, want no proof", f)
	}
}

// Headless: the CLI left running once what the user typed is gone, with no
// terminal to reach it by: its tree is owner-dead (clienttest.HeadlessCases,
// with its controls).
func TestHeadless(t *testing.T) {
	clienttest.HeadlessCases(t, Client, kiloDir(t), []string{"/usr/lib/node_modules/@kilocode/cli-linux-x64/bin/kilo"}, OwnerName)
}
