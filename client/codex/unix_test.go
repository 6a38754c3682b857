//go:build unix

// Codex's records beside Unix tables: PID 1 adopts, PATH is split by `:`,
// paths are Unix's. A Windows table's cases are TestWindowsDaemonRecord's.

package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// The daemon SIGKILLed: its servers (sessions of their own, a scrubbed
// environment, the packages PATH entry) are owner-dead through its record;
// its record of another boot proves it gone too. Control: the daemon alive
// (its start ticks as recorded) — they are its leak, not owner-dead.
func TestDeadDaemonsServers(t *testing.T) {
	const uid = 1000
	for _, tc := range []struct {
		name     string
		boot     string
		daemon   bool
		reasons  []scan.Reason
		evidence string
	}{
		{"the daemon is gone", clienttest.Boot, false, []scan.Reason{scan.Reparented, scan.OwnerDead}, "owner pid 700 is gone"},
		{"a record of another boot", "old-boot", true, []scan.Reason{scan.Reparented, scan.OwnerDead}, "not this one"},
		{"control: the daemon lives", clienttest.Boot, true, []scan.Reason{scan.Reparented}, "left behind by the live codex daemon pid 700"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := codexHome(t, 700, 70000, tc.boot)
			path := "PATH=" + filepath.Join(dir, "packages", "app-server-daemon", "releases", "0.169.0", "codex-path") + ":/usr/bin:/bin"
			server := clienttest.Proc(710, 1, 710, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{path})
			procs := []platform.Process{server}
			if tc.daemon {
				procs = append(procs, clienttest.Proc(700, 1, 700, uid, []string{"codex", "app-server"}, nil))
			}
			f := clienttest.Finding(clienttest.Scan(t, Client, dir, uid, procs...), 710)
			if f == nil || !reflect.DeepEqual(f.Reasons, tc.reasons) || f.Kind != scan.KindMCP || !strings.Contains(strings.Join(f.Evidence, "; "), tc.evidence) {
				t.Fatalf("finding %+v, want reasons %v, kind mcp, evidence %q", f, tc.reasons, tc.evidence)
			}
		})
	}
}

// TestRecordSpeaksForItsOwner: another user's daemon.pid names a root
// process: it neither owns it (a live daemon's run) nor, through the PATH
// mark a root process carries, makes it owner-dead. The control: the
// user's own process is.
func TestRecordSpeaksForItsOwner(t *testing.T) {
	const user = 1001
	dir := codexHome(t, 700, 70000, clienttest.Boot)
	path := "PATH=" + filepath.Join(dir, "packages", "app-server-daemon", "releases", "1", "codex-path")
	for _, tc := range []struct {
		uid     uint32
		reasons []scan.Reason
	}{{0, []scan.Reason{scan.Reparented, scan.Untracked}}, {user, []scan.Reason{scan.Reparented, scan.OwnerDead}}} {
		victim := clienttest.Proc(710, 1, 710, tc.uid, []string{"/usr/sbin/daemon"}, []string{path})
		daemon := clienttest.Proc(720, 1, 720, 0, []string{"/usr/sbin/crond"}, nil)
		r := clienttest.Scan(t, Client, dir, user, victim, daemon)
		if f := clienttest.Finding(r, 710); f == nil || !reflect.DeepEqual(f.Reasons, tc.reasons) {
			t.Errorf("uid %d: finding %+v, want reasons %v", tc.uid, f, tc.reasons)
		}
	}
	// A record naming a live root process does not make it owned.
	dir = codexHome(t, 720, 72000, clienttest.Boot)
	r := clienttest.Scan(t, Client, dir, user, clienttest.Proc(720, 1, 720, 0, []string{"/usr/sbin/crond"}, nil))
	if _, owned := r.OwnedRun(720); owned || clienttest.Finding(r, 720) == nil {
		t.Errorf("root's crond is owned through a user's daemon.pid")
	}
}

// A standalone install's daemon record (app-server.pid: pid and
// processStartTime, no identity — 0.148's layout, which 0.171 still
// attaches to): the daemon SIGKILLed, the servers of its package root
// (packages/standalone/ on PATH) are owner-dead with that record named;
// the daemon alive, they are its leak, not owner-dead (the control). A
// server of the other layout's root is not that record's to speak for.
func TestLegacyDaemonRecord(t *testing.T) {
	const uid = 1000
	home := func(t *testing.T) string {
		dir := codexHomeWith(t, 0, "")
		os.WriteFile(filepath.Join(dir, pidDir, legacyPID), []byte(`{"pid":700,"processStartTime":"Tue Nov 24 06:00:00 2026"}`), 0o600)
		return dir
	}
	if raw := (Adapter{}).Read(home(t)); len(raw.Daemons) != 1 || raw.Daemons[0].PID != 700 || raw.Daemons[0].Role != "app-server" || filepath.Base(raw.Daemons[0].File) != legacyPID {
		t.Fatalf("daemons read: %+v", raw.Daemons)
	}
	for _, tc := range []struct {
		name    string
		root    string
		daemon  bool
		dead    bool
		proof   string
		control bool
	}{
		{"the daemon is gone", standaloneRoot, false, true, "the daemon pid file", false},
		{"control: the daemon lives", standaloneRoot, true, false, "left behind by the live codex daemon pid 700", true},
		{"control: the other layout's server", managedRoot, false, false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := home(t)
			path := "PATH=" + filepath.Join(dir, "packages", tc.root, "0.148.0", "bin") + ":/usr/bin:/bin"
			procs := []platform.Process{clienttest.Proc(710, 1, 710, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{path})}
			if tc.daemon {
				procs = append(procs, clienttest.Proc(700, 1, 700, uid, []string{"codex", "app-server"}, nil))
			}
			f := clienttest.Finding(clienttest.Scan(t, Client, dir, uid, procs...), 710)
			if f == nil {
				t.Fatal("no finding for the server")
			}
			ev := strings.Join(f.Evidence, "; ")
			if f.Has(scan.OwnerDead) != tc.dead || tc.proof != "" && !strings.Contains(ev, tc.proof) {
				t.Errorf("finding %v, evidence %q: want owner-dead %v, evidence %q", f.Reasons, ev, tc.dead, tc.proof)
			}
			if tc.dead && (!strings.Contains(ev, legacyPID) || f.Owner != DaemonName) {
				t.Errorf("owner %q, evidence %q: want the codex daemon, its record %s named", f.Owner, ev, legacyPID)
			}
		})
	}
}

// On macOS Codex records the daemon's start as {startSeconds,
// startMicroseconds} (newer releases add bootId and uniqueId): a live
// daemon that started then is owned, never a finding, and its servers are
// held; the same pid started at another time, or a record of another boot,
// leaves them owner-dead. A Linux record means nothing on a macOS table
// but its pid: the live daemon is not owned by it (nothing verifies it),
// and neither is anything owner-dead while the pid lives.
func TestMacDaemonRecord(t *testing.T) {
	const uid = 501
	start := clienttest.Taken.Add(-time.Hour + 250*time.Microsecond)
	mac := fmt.Sprintf(`{"startSeconds":%d,"startMicroseconds":%d}`, start.Unix(), start.Nanosecond()/1000)
	unique := func(boot string) string {
		return fmt.Sprintf(`{"bootId":%q,"uniqueId":77,"startSeconds":%d,"startMicroseconds":%d}`, boot, start.Unix(), start.Nanosecond()/1000)
	}
	for _, tc := range []struct {
		name, identity string
		started        time.Time
		owned, dead    bool // the daemon is owned; its server is owner-dead
	}{
		{"its start", mac, start, true, false},
		{"its start and this boot", unique(clienttest.Boot), start, true, false},
		{"the pid started again", mac, start.Add(time.Minute), false, true},
		{"another boot", unique("old-boot"), start, false, true},
		{"a Linux record: the pid alone", `{"bootId":"boot","startTicks":5}`, start.Add(time.Minute), false, false},
	} {
		dir := codexHomeWith(t, 700, tc.identity)
		daemon := clienttest.Proc(700, 1, 700, uid, []string{"codex", "app-server", "--listen", "unix://", "--managed-daemon"}, nil)
		daemon.StartTicks = clienttest.MacStart(tc.started)
		path := "PATH=" + filepath.Join(dir, "packages", "app-server-daemon", "releases", "0.169.0", "codex-path") + ":/usr/bin:/bin"
		server := clienttest.Proc(710, 1, 710, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{path})
		server.StartTicks = clienttest.MacStart(start.Add(time.Second))
		r := clienttest.ScanSnapshot(t, Client, dir, uid, clienttest.MacSnapshot(daemon, server))
		if owned := clienttest.Finding(r, 700) == nil; owned != tc.owned {
			t.Errorf("%s: daemon owned %v, want %v", tc.name, owned, tc.owned)
		}
		f := clienttest.Finding(r, 710)
		if dead := f != nil && f.Has(scan.OwnerDead); dead != tc.dead {
			t.Errorf("%s: server owner-dead %v, want %v (%+v)", tc.name, dead, tc.dead, f)
		}
	}
}
