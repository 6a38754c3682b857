package codex

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/scan"
)

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
