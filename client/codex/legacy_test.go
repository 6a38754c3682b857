package codex

// A standalone install's record (app-server.pid), read beside the managed
// daemon's.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

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

// Both layouts' records naming one daemon make one record of it.
func TestBothRecordsOneDaemon(t *testing.T) {
	dir := codexHome(t, 700, 70000, "boot")
	os.WriteFile(filepath.Join(dir, pidDir, legacyPID), []byte(`{"pid":700,"processStartTime":"Tue Nov 24 06:00:00 2026"}`), 0o600)
	if raw := (Adapter{}).Read(dir); len(raw.Daemons) != 1 || filepath.Base(raw.Daemons[0].File) != daemonPID {
		t.Errorf("daemons %+v, want daemon.pid's alone", raw.Daemons)
	}
}

// processStartTime in a record with no identity confirms the live pid
// when it names that process's start to the second (UTC); a start that
// does not match never makes the daemon gone — the pid alone decides
// (the zone Codex's clock was in is not recorded).
func TestLegacyStartConfirms(t *testing.T) {
	start := clienttest.Taken.Add(-time.Hour).Truncate(time.Second)
	daemon := clienttest.Proc(700, 1, 700, 1000, []string{"codex", "app-server"}, nil)
	daemon.StartTicks = clienttest.MacStart(start)
	snap := clienttest.MacSnapshot(daemon)
	for _, tc := range []struct {
		recorded string
		start    bool
	}{
		{start.UTC().Format("Mon Jan _2 15:04:05 2006"), true},
		{start.Add(-5 * time.Hour).UTC().Format("Mon Jan _2 15:04:05 2006"), false},
		{"not a time", false},
	} {
		rec := Record{File: "/h/.codex/app-server-daemon/app-server.pid", Role: "app-server", PID: 700, ProcessStartTime: tc.recorded}
		o := rec.owner(snap)
		if (o.Start != "") != tc.start || o.Gone != "" {
			t.Errorf("%q: start %q gone %q, want a start %v and never gone", tc.recorded, o.Start, o.Gone, tc.start)
		}
	}
}
