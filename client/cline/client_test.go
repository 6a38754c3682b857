package cline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// clineHome makes a ~/.cline with a hub lock naming pid 900, started at
// startedAt, and the MCP settings 3.0.65 writes (cline mcp add).
func clineHome(t *testing.T, startedAt string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".cline")
	os.MkdirAll(filepath.Join(dir, locksDir), 0o700)
	os.MkdirAll(filepath.Join(dir, "data", "settings"), 0o700)
	if startedAt != "" {
		os.WriteFile(filepath.Join(dir, locksDir, "production.json"), []byte(`{"hubId": "hub_1795706310219_z21xz", "protocolVersion": "v1",
  "authToken": "391b9b", "host": "127.0.0.1", "port": 25463, "url": "ws://127.0.0.1:25463/hub",
  "pid": 900, "startedAt": "`+startedAt+`", "updatedAt": "`+startedAt+`"}`), 0o600)
	}
	os.WriteFile(filepath.Join(dir, settingsFile), []byte(`{"mcpServers": {
  "stub": {"transport": {"type": "stdio", "command": "/opt/srv/stubborn", "args": ["--quiet"]}},
  "old": {"command": "npx", "args": ["-y", "old-server"]},
  "remote": {"transport": {"type": "streamableHttp", "url": "https://example.com/mcp"}}}}`), 0o600)
	return dir
}

// TestReadRaw: the hub lock and the stdio servers, in the transport form
// and the older flat one; a remote server is not a process.
func TestReadRaw(t *testing.T) {
	raw := Adapter{}.Read(clineHome(t, "1970-01-01T00:15:01.1Z"))
	if len(raw.Hubs) != 1 || raw.Hubs[0].PID != 900 || raw.Hubs[0].HubID != "hub_1795706310219_z21xz" {
		t.Errorf("hubs %+v (problems %v)", raw.Hubs, raw.Problems)
	}
	var names []string
	for _, s := range raw.Servers {
		names = append(names, s.Name+"="+s.Command)
	}
	if strings.Join(names, ",") != "old=npx,stub=/opt/srv/stubborn" {
		t.Errorf("servers %v", names)
	}
}

// TestHubOwned: a live hub whose start fits its lock (it writes it as it
// comes up) is owned: no finding, though it is reparented and leads its
// own session. The controls: no lock, the pid another process (started
// long before the lock), and the lock another user's.
func TestHubOwned(t *testing.T) {
	const uid = 1000
	hub := func(u uint32) platform.Process {
		return clienttest.Proc(900, 1, 900, u, []string{"/usr/lib/node_modules/@cline/cli-linux-x64/bin/cline", "--cline-hub-daemon", "--port", "25463"},
			[]string{EnvLaunch + `={"launcher":"cline"}`})
	}
	for _, tc := range []struct {
		name      string
		startedAt string
		proc      platform.Process
		owned     bool
	}{
		{"its lock verifies", "1970-01-01T00:15:01.1Z", hub(uid), true},
		{"control: no lock", "", hub(uid), false},
		{"control: pid 900 is another process", "1970-01-01T01:15:00Z", hub(uid), false},
		{"control: another user's process", "1970-01-01T00:15:01.1Z", hub(uid + 1), false},
	} {
		r := clienttest.Scan(t, Client, clineHome(t, tc.startedAt), uid, tc.proc)
		f := clienttest.Finding(r, 900)
		if (f == nil) != tc.owned {
			t.Errorf("%s: finding %+v; want owned %v", tc.name, f, tc.owned)
		}
		if f != nil && f.Has(scan.OwnerDead) {
			t.Errorf("%s: the hub is owner-dead: %q", tc.name, f.Evidence)
		}
	}
}

// TestServerLeftByCline: a server cline ran, reparented, keeps cline's
// group; cline, its leader, gone in a shell's session proves it
// owner-dead. The control: cline lives.
func TestServerLeftByCline(t *testing.T) {
	const uid = 1000
	server := clienttest.Proc(820, 1, 800, uid, []string{"node", "/opt/srv/stubborn.mjs"}, []string{EnvLaunch + `={"launcher":"cline"}`})
	cline := clienttest.Proc(800, 400, 800, uid, []string{"cline", "-i"}, nil)
	dir := clineHome(t, "")
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		dead  bool
	}{
		{"cline gone", []platform.Process{server}, true},
		{"control: cline lives", []platform.Process{cline, server}, false},
	} {
		f := clienttest.Finding(clienttest.Scan(t, Client, dir, uid, tc.procs...), 820)
		if f == nil || f.Has(scan.OwnerDead) != tc.dead || f.Owner != OwnerName {
			t.Errorf("%s: %+v; want owner-dead %v, owner cline", tc.name, f, tc.dead)
		}
	}
}
