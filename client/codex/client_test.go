package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// codexHome makes a CODEX_HOME with a daemon record (pid, start ticks, the
// identity written as Codex 0.169 writes its untagged enum) and config.toml with two servers.
func codexHome(t *testing.T, pid int, ticks uint64, boot string) string {
	t.Helper()
	return codexHomeWith(t, pid, fmt.Sprintf(`{"bootId":%q,"startTicks":%d}`, boot, ticks))
}

// codexHomeWith is codexHome with the record's processIdentity as given.
func codexHomeWith(t *testing.T, pid int, identity string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".codex")
	os.MkdirAll(filepath.Join(dir, pidDir), 0o700)
	if pid > 0 {
		rec := fmt.Sprintf(`{"pid":%d,"processStartTime":"Tue Nov 24 06:00:00 2026","processIdentity":%s}`, pid, identity)
		os.WriteFile(filepath.Join(dir, pidDir, daemonPID), []byte(rec), 0o600)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte(`model_provider = "mock"
[mcp_servers.stubborn]
command = "/opt/srv/stubborn"
args = ["--quiet"]

[mcp_servers.remote]
url = "https://example.com/mcp"
`), 0o600)
	return dir
}

func TestReadRaw(t *testing.T) {
	dir := codexHome(t, 700, 70000, "boot")
	raw := Adapter{}.Read(dir)
	if len(raw.Daemons) != 1 || raw.Daemons[0].PID != 700 || raw.Daemons[0].Role != "app-server" {
		t.Errorf("daemons %+v", raw.Daemons)
	}
	if id, ok := parseIdentity(raw.Daemons[0].ProcessIdentity); !ok || !id.linux() || id.BootID != "boot" || *id.StartTicks != 70000 {
		t.Errorf("identity %s: %+v %v", raw.Daemons[0].ProcessIdentity, id, ok)
	}
	for _, in := range []string{`{"bootId":"b","startTicks":5}`, `{"kind":"linux","bootId":"b","startTicks":5}`, `{"linux":{"bootId":"b","startTicks":5}}`} {
		if id, ok := parseIdentity([]byte(in)); !ok || !id.linux() || id.BootID != "b" || *id.StartTicks != 5 {
			t.Errorf("%s: %+v %v", in, id, ok)
		}
	}
	for _, in := range []string{`{"startSeconds":1,"startMicroseconds":2}`, `{"bootId":"b","uniqueId":9,"startSeconds":1,"startMicroseconds":2}`, `{"MacOs":{"startSeconds":1,"startMicroseconds":2}}`} {
		if id, ok := parseIdentity([]byte(in)); !ok || id.linux() || !id.mac() || *id.StartSeconds != 1 || *id.StartMicros != 2 {
			t.Errorf("%s: %+v %v, want a macOS identity", in, id, ok)
		}
	}
	for _, in := range []string{`{"MacOs":{"startSeconds":1}}`, `{"startSeconds":1,"startMicroseconds":1000000}`, `{"bootId":"b"}`, `[]`} {
		if id, ok := parseIdentity([]byte(in)); ok {
			t.Errorf("%s: read as %+v", in, id)
		}
	}
}

// The managed daemon, reparented (setsid) and shared by sessions: while its
// record verifies it is owned, never a finding; the control — no record —
// leaves it a finding, not owner-dead.
func TestLiveDaemonIsOwned(t *testing.T) {
	const uid = 1000
	daemon := clienttest.Proc(700, 1, 700, uid, []string{"codex", "app-server", "--listen", "unix://", "--managed-daemon"}, []string{"CODEX_MANAGED_BY_NPM=1"})
	for _, tc := range []struct {
		name    string
		pid     int
		finding bool
	}{{"its record", 700, false}, {"control: no record", 0, true}} {
		r := clienttest.Scan(t, Client, codexHome(t, tc.pid, 70000, clienttest.Boot), uid, daemon)
		f := clienttest.Finding(r, 700)
		if got := f != nil; got != tc.finding {
			t.Errorf("%s: a finding %v, want %v", tc.name, got, tc.finding)
		}
		if f != nil && f.Has(scan.OwnerDead) {
			t.Errorf("%s: the daemon is owner-dead: %v", tc.name, f.Evidence)
		}
	}
}

// The npm wrapper SIGKILLed leaves the native TUI on the terminal, in the
// wrapper's process group: owner-dead by the group's leader. Control: the
// wrapper alive, and the TUI a session, no finding.
func TestOrphanedTUI(t *testing.T) {
	const uid = 1000
	tui := clienttest.Proc(620, 1, 600, uid, []string{"/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex"}, []string{"CODEX_MANAGED_BY_NPM=1"})
	wrapper := clienttest.Proc(600, 500, 600, uid, []string{"node", "/usr/bin/codex"}, nil)
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		dead  bool
	}{{"the wrapper is gone", nil, true}, {"control: the wrapper lives", []platform.Process{wrapper}, false}} {
		r := clienttest.Scan(t, Client, codexHome(t, 0, 0, ""), uid, append(tc.procs, tui)...)
		f := clienttest.Finding(r, 620)
		if _, live := r.LiveClient(620); !tc.dead && f == nil && live {
			continue // alive, its wrapper too: a session (scan.ApplyLiveClients)
		}
		if f == nil || f.Has(scan.OwnerDead) != tc.dead || f.Owner != OwnerName || f.Kind != scan.KindACP {
			t.Errorf("%s: finding %+v, want owner-dead %v, owner codex, kind acp", tc.name, f, tc.dead)
		}
	}
}
