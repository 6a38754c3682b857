package codex

// A standalone install's record (app-server.pid), read beside the managed
// daemon's.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
)

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
