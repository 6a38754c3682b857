package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/scan"
)

// On Windows Codex records its daemon's creation time as a FILETIME
// (processStartTime, no processIdentity): the live daemon created then is
// owned and verified; the pid created later is another process, and the
// daemon gone; a start of another shape leaves the pid alone, unverified
// but never gone. Its servers are tied to it by their PATH entry below
// the package root — on a Windows build, whose paths are Windows' (the
// tie's assertions run under wine: scripts/wine-test.sh); the control is
// a server whose PATH names no daemon, untracked in every case.
func TestWindowsDaemonRecord(t *testing.T) {
	const uid = 1001
	created := clienttest.Taken.Add(-time.Hour + 250*time.Microsecond)
	fileTime := func(at time.Time) string { return fmt.Sprint(uint64(at.UnixMicro())*10 + fileTimeEpoch) }
	for _, tc := range []struct {
		name, start string
		started     time.Time
		verified    bool // the daemon's start is its record's
		gone        bool // the record's daemon is gone: its server owner-dead
	}{
		{"its creation time", fileTime(created), created, true, false},
		{"the pid created again, later", fileTime(created), created.Add(time.Minute), false, true},
		{"a pid created before the record's: the pid alone", fileTime(created), created.Add(-time.Minute), false, false},
		{"an lstart text: the pid alone", "Tue Nov 24 06:00:00 2026", created, false, false},
	} {
		dir := filepath.Join(t.TempDir(), ".codex")
		os.MkdirAll(filepath.Join(dir, pidDir), 0o700)
		rec := fmt.Sprintf(`{"pid":700,"processStartTime":%q}`, tc.start)
		os.WriteFile(filepath.Join(dir, pidDir, daemonPID), []byte(rec), 0o600)
		entry := filepath.Join(dir, "packages", "app-server-daemon", "releases", "0.169.0", "codex-path")
		daemon := clienttest.WinProc(700, 600, tc.started, uid, `codex.exe app-server --listen unix://`, nil)
		server := clienttest.WinProc(710, 690, created.Add(time.Second), uid, `C:\srv\stubborn.exe --quiet`,
			[]string{`Path=C:\WINDOWS\system32;` + entry})
		control := clienttest.WinProc(720, 690, created.Add(time.Second), uid, `C:\srv\stubborn.exe --quiet`,
			[]string{`Path=C:\WINDOWS\system32`})
		snap := clienttest.WindowsSnapshot(daemon, server, control)
		ev, problems, _ := clienttest.Judge(Client, dir, uid, snap)
		if len(problems) > 0 || len(ev.Ledgers) != 1 {
			t.Fatalf("%s: %d ledgers, problems %v", tc.name, len(ev.Ledgers), problems)
		}
		o := ev.Ledgers[0].Owner
		if verified := o.Start != ""; verified != tc.verified || (o.Gone != "") != tc.gone {
			t.Errorf("%s: owner start %q, gone %q; want verified %v, gone %v", tc.name, o.Start, o.Gone, tc.verified, tc.gone)
		}
		if tc.gone && !strings.Contains(o.Gone, "pid 700 now is a process created") {
			t.Errorf("%s: gone says %q", tc.name, o.Gone)
		}
		r := clienttest.ScanSnapshot(t, Client, dir, uid, snap)
		if f := clienttest.Finding(r, 720); f == nil || !f.Has(scan.Untracked) {
			t.Errorf("%s: control 720 %+v, want untracked", tc.name, f)
		}
		if runtime.GOOS != "windows" {
			continue // the entry is spelt with '/' here: a Windows table's PATH never holds it
		}
		if f := clienttest.Finding(r, 710); (f != nil && f.Has(scan.OwnerDead)) != tc.gone || (!tc.gone && f != nil && f.Has(scan.Untracked)) {
			t.Errorf("%s: server 710 %+v, want owner-dead %v, else held", tc.name, f, tc.gone)
		}
	}
}
