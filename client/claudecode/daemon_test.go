package claudecode

// The background-agent daemon (daemon.go), on a made-up table. Each
// process starts at pid seconds after boot (clienttest.Proc: pid×100
// ticks), boot at the epoch, the table read at 36000 s.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

const (
	bgUID = 1000
	bgRun = "/tmp/cc-daemon-1000/f3e76c85"
)

// at is the wall time of second s after boot.
func at(s int) string { return time.Unix(int64(s), 0).UTC().Format("2006-01-02T15:04:05.000Z") }

// bgHome writes a config dir whose daemon is pid 500: its lock, a roster
// with job j1 (host 510, claude 520) when roster, and a log in which it
// spawned spares 510, 530 and 540, j1 claimed 510, j2 claimed 530, and j2
// settled at settled.
func bgHome(t *testing.T, roster bool, settled int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".claude")
	os.MkdirAll(filepath.Join(dir, "daemon"), 0o700)
	os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
	lock, _ := json.Marshal(map[string]any{"pid": 500, "procStart": "50000", "version": "2.1.331", "startedAt": 500000})
	os.WriteFile(filepath.Join(dir, "daemon.lock"), lock, 0o600)
	workers := map[string]any{}
	if roster {
		workers["j1"] = map[string]any{"pid": 510, "procStart": "51000", "replPid": 520, "replProcStart": "52000",
			"sessionId": "s-j1", "cwd": "/w", "ptySock": bgRun + "/spare/a.pty.sock"}
	}
	b, _ := json.Marshal(map[string]any{"proto": 1, "supervisorPid": 500, "workers": workers})
	os.WriteFile(filepath.Join(dir, "daemon", "roster.json"), b, 0o600)
	log := []string{
		fmt.Sprintf("[%s] [supervisor] ─── daemon start ─── version=2.1.331 pid=500 origin=transient", at(500)),
		fmt.Sprintf("[%s] [bg] bg: control socket bound at %s/control.sock", at(500), bgRun),
		fmt.Sprintf("[%s] [bg] bg spare spawned host pid=510", at(510)),
		fmt.Sprintf("[%s] [bg] bg claimed-spare j1 (shell)", at(511)),
		fmt.Sprintf("[%s] [bg] bg spare spawned host pid=530", at(530)),
		fmt.Sprintf("[%s] [bg] bg claimed-spare j2 (shell)", at(531)),
		fmt.Sprintf("[%s] [bg] bg spare spawned host pid=540", at(540)),
	}
	if settled > 0 {
		log = append(log, fmt.Sprintf("[%s] [bg] bg settled j2 (done)", at(settled)))
	}
	os.WriteFile(filepath.Join(dir, "daemon.log"), []byte(strings.Join(log, "\n")+"\n"), 0o600)
	return dir
}

// bgTable is the daemon 500 (when daemon) and its three pairs: j1's host
// 510 and claude 520 with a server 525, j2's 530 and 535 with 536, the
// warm spare 540 and 545. Without the daemon they are init's.
func bgTable(daemon bool) []platform.Process {
	parent := 1
	var out []platform.Process
	if daemon {
		parent = 500
		out = append(out, clienttest.Proc(500, 1, 500, bgUID, []string{"claude", "daemon", "run", "--origin", "transient"}, nil))
	}
	pair := func(h, id string, hp, cp int) {
		out = append(out,
			clienttest.Proc(hp, parent, hp, bgUID, []string{"claude", "bg-pty-host", "--bg-pty-host", bgRun + "/spare/" + id + ".pty.sock", "200", "50", "--", "/opt/claude", "--bg-spare", bgRun + "/spare/" + id + ".claim.sock"}, nil),
			clienttest.Proc(cp, hp, cp, bgUID, []string{"claude", "bg-spare", "--bg-spare", bgRun + "/spare/" + id + ".claim.sock"}, []string{"CLAUDE_CODE_SESSION_ID=s-" + h}))
	}
	pair("j1", "a", 510, 520)
	out = append(out, clienttest.Proc(525, 520, 520, bgUID, []string{"node", "/srv/mcp.js"}, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-j1"}))
	pair("j2", "b", 530, 535)
	out = append(out, clienttest.Proc(536, 535, 535, bgUID, []string{"node", "/srv/mcp.js"}, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-j2"}))
	pair("spare", "c", 540, 545)
	return out
}

// TestDaemonSettledJob: j2 settled two minutes ago and its host still runs
// under the live daemon: superseded, with the log's lines, its tree (its
// claude, its server) the finding's. The roster's job j1, the warm spare
// and the daemon are no findings. The controls: settled 30 s ago (within
// the hold), no settled line, the host's start off its spawn line (another
// process at the pid).
func TestDaemonSettledJob(t *testing.T) {
	const now = 36000
	for _, tc := range []struct {
		name    string
		settled int
		shift   uint64 // added to 530's start ticks
		want    bool
	}{
		{"settled 2 min ago", now - 120, 0, true},
		{"control: settled 30 s ago", now - 30, 0, false},
		{"control: never settled", 0, 0, false},
		{"control: another process at the pid", now - 120, 60 * 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := bgTable(true)
			for i := range procs {
				if procs[i].PID == 530 {
					procs[i].StartTicks += tc.shift
				}
			}
			r := clienttest.Scan(t, Client, bgHome(t, true, tc.settled), bgUID, procs...)
			f := clienttest.Finding(r, 530)
			if got := f != nil && f.Has(scan.Superseded); got != tc.want {
				t.Fatalf("host 530: superseded %v, want %v: %+v", got, tc.want, f)
			}
			if f != nil && tc.want {
				t.Logf("evidence: %q", f.Evidence)
				if !strings.Contains(strings.Join(f.Evidence, " "), `bg settled j2 (done)`) || len(f.PIDs()) < 3 {
					t.Errorf("want the log's line and the host's tree (530, 535, 536): %+v", f)
				}
			}
			for _, pid := range []int{500, 510, 520, 525, 540, 545} {
				if g := clienttest.Finding(r, pid); g != nil && (g.Has(scan.Superseded) || g.Has(scan.OwnerDead)) {
					t.Errorf("pid %d is a finding: %+v", pid, g)
				}
			}
		})
	}
}

// TestDaemonGone: the daemon was SIGKILLed (its pid gone, a zombie, or
// another process at it): the roster's job j1 is still a live background
// session — its host, claude and server no findings, whatever their place
// — while the spares no job claims, 530 and 540, are owner-dead. Another
// user's process at a host's pid is not this user's to speak of.
func TestDaemonGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		daemon *platform.Process
	}{
		{"pid gone", nil},
		{"a zombie", zombie(clienttest.Proc(500, 1, 500, bgUID, []string{"claude"}, nil))},
		{"another process at the pid", started(clienttest.Proc(500, 1, 500, bgUID, []string{"sleep", "9"}, nil), 900*100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := bgTable(false)
			if tc.daemon != nil {
				procs = append(procs, *tc.daemon)
			}
			dir := bgHome(t, true, 0)
			r := clienttest.Scan(t, Client, dir, bgUID, procs...)
			for _, pid := range []int{530, 540} {
				f := clienttest.Finding(r, pid)
				if f == nil || !f.Has(scan.OwnerDead) || f.Owner != OwnerName {
					t.Fatalf("spare %d: %+v; want owner-dead", pid, f)
				}
				if pid == 540 {
					t.Logf("evidence: %q", f.Evidence)
				}
			}
			for _, pid := range []int{510, 520, 525} {
				if f := clienttest.Finding(r, pid); f != nil && (f.Has(scan.OwnerDead) || f.Has(scan.Superseded)) {
					t.Errorf("the roster's job: pid %d is a finding: %+v", pid, f)
				}
			}
			snap := platform.NewSnapshot(append([]platform.Process{clienttest.Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}, procs...), clienttest.Boot, 10*time.Hour, clienttest.Taken)
			ev, _, _ := clienttest.Judge(Client, dir, bgUID, snap)
			var job *scan.Session
			for i := range ev.Sessions {
				if ev.Sessions[i].ID == "s-j1" {
					job = &ev.Sessions[i]
				}
			}
			if job == nil || job.Owner.PID != 510 || job.Kind != "bg job j1" {
				t.Errorf("the roster's job is no session: %+v", ev.Sessions)
			}
		})
	}
	t.Run("control: the roster lists no job", func(t *testing.T) {
		r := clienttest.Scan(t, Client, bgHome(t, false, 0), bgUID, bgTable(false)...)
		if f := clienttest.Finding(r, 510); f == nil || !f.Has(scan.OwnerDead) {
			t.Errorf("with no roster entry, 510 is a spare left like the others: %+v", f)
		}
	})
	t.Run("control: no lock, the spares' daemon alive", func(t *testing.T) {
		dir := bgHome(t, false, 0)
		os.Remove(filepath.Join(dir, "daemon.lock"))
		r := clienttest.Scan(t, Client, dir, bgUID, bgTable(true)...)
		for _, pid := range []int{510, 530, 540} {
			if f := clienttest.Finding(r, pid); f != nil && (f.Has(scan.OwnerDead) || f.Has(scan.Superseded)) {
				t.Errorf("a live daemon's host %d: %+v", pid, f)
			}
		}
	})
	t.Run("another user's", func(t *testing.T) {
		procs := bgTable(false)
		for i := range procs {
			if procs[i].PID == 540 {
				procs[i].UID = 1001
			}
		}
		r := clienttest.Scan(t, Client, bgHome(t, true, 0), bgUID, procs...)
		if f := clienttest.Finding(r, 540); f != nil && f.Has(scan.OwnerDead) {
			t.Errorf("uid 1000's records proved uid 1001's process dead: %+v", f)
		}
	})
}

func zombie(p platform.Process) *platform.Process { p.State = 'Z'; return &p }

func started(p platform.Process, ticks uint64) *platform.Process { p.StartTicks = ticks; return &p }

// TestDaemonOlderGeneration: daemon.lock names 600, started after 500, a
// `claude daemon run` of the same config dir holding only a spare: the
// older generation is superseded, its spare with it. The controls: 500
// holds a roster job's host, names another config dir, or started after
// the live one.
func TestDaemonOlderGeneration(t *testing.T) {
	for _, tc := range []struct {
		name     string
		jobUnder int    // the parent of the roster job's host 510
		cfg      string // 500's CLAUDE_CONFIG_DIR, "" for this dir
		start    uint64 // 500's start ticks
		want     bool
	}{
		{"an older generation", 600, "", 50000, true},
		{"control: it holds a roster job", 500, "", 50000, false},
		{"control: another config dir", 600, "/home/u/other", 50000, false},
		{"control: started after the live one", 600, "", 70000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := bgHome(t, true, 0)
			lock, _ := json.Marshal(map[string]any{"pid": 600, "procStart": "60000", "version": "2.1.331"})
			os.WriteFile(filepath.Join(dir, "daemon.lock"), lock, 0o600)
			cfg := dir
			if tc.cfg != "" {
				cfg = tc.cfg
			}
			old := clienttest.Proc(500, 1, 500, bgUID, []string{"/opt/claude", "daemon", "run", "--origin", "transient"}, []string{"CLAUDE_CONFIG_DIR=" + cfg})
			old.StartTicks = tc.start
			procs := []platform.Process{old, clienttest.Proc(600, 1, 600, bgUID, []string{"/opt/claude", "daemon", "run"}, []string{"CLAUDE_CONFIG_DIR=" + dir})}
			for _, p := range bgTable(true) {
				switch p.PID {
				case 500, 530, 535, 536:
					continue
				case 510:
					p.PPID = tc.jobUnder
				case 540:
					p.PPID = 500
				}
				procs = append(procs, p)
			}
			r := clienttest.Scan(t, Client, dir, bgUID, procs...)
			f := clienttest.Finding(r, 500)
			if got := f != nil && f.Has(scan.Superseded); got != tc.want {
				t.Fatalf("daemon 500: superseded %v, want %v: %+v", got, tc.want, f)
			}
			if tc.want {
				t.Logf("evidence: %q", f.Evidence)
				if !slices.Contains(f.PIDs(), 540) {
					t.Errorf("its spare is not in its tree: %v", f.PIDs())
				}
			}
			for _, pid := range []int{600, 510, 520, 525} {
				if g := clienttest.Finding(r, pid); g != nil && (g.Has(scan.Superseded) || g.Has(scan.OwnerDead)) {
					t.Errorf("pid %d is a finding: %+v", pid, g)
				}
			}
		})
	}
}

// BenchmarkReadDaemon: a config dir's read with the daemon's records at
// their bounds — a 4 MiB log (its last 256 KiB read), a roster of 256 jobs
// — beside the same dir without them.
func BenchmarkReadDaemon(b *testing.B) {
	for _, with := range []bool{false, true} {
		dir := filepath.Join(b.TempDir(), ".claude")
		os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
		os.WriteFile(filepath.Join(dir, "settings.json"), []byte("{}"), 0o600)
		if with {
			os.MkdirAll(filepath.Join(dir, "daemon"), 0o700)
			lock, _ := json.Marshal(map[string]any{"pid": 500, "procStart": "50000"})
			os.WriteFile(filepath.Join(dir, "daemon.lock"), lock, 0o600)
			workers := map[string]any{}
			for i := range maxWorkers {
				workers[fmt.Sprintf("j%07x", i)] = map[string]any{"pid": 1000 + i, "procStart": "123456", "replPid": 5000 + i, "replProcStart": "123457",
					"sessionId": fmt.Sprintf("%08x-0000-4000-8000-000000000000", i), "cwd": "/home/u/project", "ptySock": bgRun + "/spare/x.pty.sock"}
			}
			r, _ := json.Marshal(map[string]any{"proto": 1, "supervisorPid": 500, "workers": workers})
			os.WriteFile(filepath.Join(dir, "daemon", "roster.json"), r, 0o600)
			var log strings.Builder
			for i := 0; log.Len() < 4<<20; i++ {
				fmt.Fprintf(&log, "[%s] [bg] bg spare spawned host pid=%d\n[%s] [bg] bg claimed-spare j%07x (shell)\n[%s] [bg] bg settled j%07x (done)\n", at(i), 1000+i, at(i), i, at(i), i)
			}
			os.WriteFile(filepath.Join(dir, "daemon.log"), []byte(log.String()), 0o600)
		}
		b.Run(map[bool]string{false: "without", true: "with"}[with], func(b *testing.B) {
			for range b.N {
				if raw := ReadRaw(dir); with && (raw.Daemon == nil || len(raw.Daemon.Workers) != maxWorkers) {
					b.Fatalf("not read: %+v", raw.Daemon)
				}
			}
		})
	}
}

// TestDaemonUnverifiable: where the records' starts cannot be checked (a
// table of wall-clock starts, as macOS gives; or a lock whose procStart is
// not a number), nothing of the daemon's is said gone or superseded: a
// daemon that cannot be shown gone may live. The control, on Linux: the
// spares are owner-dead (TestDaemonGone).
func TestDaemonUnverifiable(t *testing.T) {
	t.Run("wall-clock starts", func(t *testing.T) {
		procs := bgTable(false)
		for i := range procs {
			procs[i].StartTicks = clienttest.MacStart(clienttest.Taken.Add(-time.Hour))
		}
		r := clienttest.ScanSnapshot(t, Client, bgHome(t, true, 0), bgUID, clienttest.MacSnapshot(procs...))
		for _, pid := range []int{510, 530, 540} {
			if f := clienttest.Finding(r, pid); f != nil && (f.Has(scan.OwnerDead) || f.Has(scan.Superseded)) {
				t.Errorf("pid %d: %+v; want nothing proven", pid, f)
			}
		}
	})
	t.Run("a roster not read whole", func(t *testing.T) {
		dir := bgHome(t, true, 0)
		os.WriteFile(filepath.Join(dir, "daemon", "roster.json"), []byte(`{"workers": {"j1": `), 0o600)
		snap := platform.NewSnapshot(append([]platform.Process{clienttest.Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}, bgTable(false)...), clienttest.Boot, 10*time.Hour, clienttest.Taken)
		ev, problems, _ := clienttest.Judge(Client, dir, bgUID, snap)
		if len(problems) == 0 {
			t.Error("a roster that is not JSON is no problem")
		}
		for _, l := range ev.Ledgers {
			if l.Owner.Gone != "" || len(l.Runs) > 0 && l.Runs[0].Superseded != "" {
				t.Errorf("with the roster unread, a ledger says %q of %+v", l.Owner.Gone, l.Runs)
			}
		}
	})
	t.Run("a lock's start not a number", func(t *testing.T) {
		dir := bgHome(t, true, 0)
		lock, _ := json.Marshal(map[string]any{"pid": 500, "procStart": "Mon Nov 24 08:00:00 2026"})
		os.WriteFile(filepath.Join(dir, "daemon.lock"), lock, 0o600)
		r := clienttest.Scan(t, Client, dir, bgUID, bgTable(false)...)
		for _, pid := range []int{530, 540} {
			if f := clienttest.Finding(r, pid); f != nil && (f.Has(scan.OwnerDead) || f.Has(scan.Superseded)) {
				t.Errorf("pid %d: %+v; want nothing proven", pid, f)
			}
		}
	})
}
