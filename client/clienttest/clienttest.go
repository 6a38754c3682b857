package clienttest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Proc is a process of uid in process group pgid, started at tick pid×100:
// in the session of a login shell, pid 400, as a client run from a
// terminal is, or — when it leads its group — in a session of its own.
func Proc(pid, ppid, pgid int, uid uint32, argv, env []string) platform.Process {
	sid := 400
	if pgid == pid {
		sid = pid
	}
	return platform.Process{PID: pid, PPID: ppid, PGID: pgid, SID: sid, State: 'S', Comm: filepath.Base(argv[0]),
		StartTicks: uint64(pid) * 100, RSS: 1 << 20, UID: uid}.WithDetails(argv, env, platform.Cgroup{Unified: "/"})
}

// Boot is the made-up table's boot id; Taken when it was read (10 hours
// after boot).
const Boot = "boot"

// Taken is when the made-up table was read.
var Taken = time.Unix(36000, 0)

// Scan scans procs (under init) with c's marks and what c judges of dir,
// read here as its reader prints it and taken as uid's (the test's files
// stand for that user's). What c judges as a problem fails the test.
func Scan(t *testing.T, c client.Client, dir string, uid uint32, procs ...platform.Process) *scan.Result {
	t.Helper()
	base := []platform.Process{Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}
	return ScanSnapshot(t, c, dir, uid, platform.NewSnapshot(append(base, procs...), Boot, 10*time.Hour, Taken))
}

// MacSnapshot is a macOS-shaped table of procs under launchd, read at
// Taken, 10 hours after boot: each process's StartTicks are microseconds
// since the epoch, as macOS gives them (set them with MacStart).
func MacSnapshot(procs ...platform.Process) *platform.Snapshot {
	launchd := Proc(1, 0, 0, 0, []string{"/sbin/launchd"}, nil)
	launchd.StartTicks = MacStart(Taken.Add(-10 * time.Hour))
	return platform.NewWallSnapshot(append([]platform.Process{launchd}, procs...), Boot, Taken.Add(-10*time.Hour), Taken)
}

// WinProc is a process of a Windows-shaped table (WindowsSnapshot): its
// pid, recorded parent pid, creation time, owner, command line and
// environment.
func WinProc(pid, ppid int, created time.Time, uid uint32, cmdline string, env []string) platform.WinProc {
	image := cmdline
	if i := strings.IndexByte(image, ' '); i >= 0 {
		image = image[:i]
	}
	return platform.WinProc{PID: pid, PPID: ppid, Created: created, Image: filepath.Base(strings.ReplaceAll(image, `\`, "/")),
		UID: uid, Cmdline: cmdline, Env: env}
}

// WindowsSnapshot is a Windows-shaped table of procs, read at Taken, 10
// hours after boot: no init adopts, a process whose recorded parent is
// gone is marked so (platform.WindowsSnapshot).
func WindowsSnapshot(procs ...platform.WinProc) *platform.Snapshot {
	system := platform.WinProc{PID: 4, Created: Taken.Add(-10 * time.Hour), Image: "System", UID: 18}
	return platform.WindowsSnapshot(append([]platform.WinProc{system}, procs...), Taken, Taken.Add(-10*time.Hour), nil)
}

// MacStart is a macOS process's StartTicks for a start at t.
func MacStart(t time.Time) uint64 { return uint64(t.UnixMicro()) }

// ScanSnapshot is Scan over a table made by the caller.
func ScanSnapshot(t *testing.T, c client.Client, dir string, uid uint32, snap *platform.Snapshot) *scan.Result {
	t.Helper()
	ev, problems, _ := Judge(c, dir, uid, snap)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	return scanEvidence(t, c, snap, ev)
}

// Advise is Scan with the advice computed (no activity sampled): the
// result, and the evidence of each advice whose ID is id.
func Advise(t *testing.T, c client.Client, dir string, uid uint32, id string, procs ...platform.Process) (*scan.Result, []string) {
	t.Helper()
	base := []platform.Process{Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}
	snap := platform.NewSnapshot(append(base, procs...), Boot, 10*time.Hour, Taken)
	ev, problems, _ := Judge(c, dir, uid, snap)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	r := scanEvidence(t, c, snap, ev)
	r.Advise(ev.Advisers, nil)
	var got []string
	for _, a := range r.Advice {
		if a.ID == id {
			got = append(got, a.Evidence)
		}
	}
	return r, got
}

// scanEvidence scans snap with c's marks and ev.
func scanEvidence(t *testing.T, c client.Client, snap *platform.Snapshot, ev scan.Evidence) *scan.Result {
	t.Helper()
	info := c.Info()
	cfg := scan.Config{Marks: info.AllMarks()}
	r, err := scan.Scan(snap, cfg, func(_, _ []*platform.Process) (scan.Evidence, error) { return ev, nil })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Judge is c's judgement of dir against snap, read here as its reader
// prints it (Read), taken as uid's read whoever owns the test's files
// (the head's uid set to uid), and decoded (Decode).
func Judge(c client.Client, dir string, uid uint32, snap *platform.Snapshot) (scan.Evidence, []error, []string) {
	var head map[string]any
	json.Unmarshal(c.Read(dir), &head)
	head["uid"] = uid
	b, _ := json.Marshal(head)
	return c.Decode(b, dir, uid).Judge(snap)
}

// Finding is r's finding rooted at pid, or nil.
func Finding(r *scan.Result, pid int) *scan.Finding {
	for i := range r.Findings {
		if r.Findings[i].Root.PID == pid {
			return &r.Findings[i]
		}
	}
	return nil
}

// PIDMarkCases checks a client's pid mark, env (its variable, which names
// the client's own pid or its launcher's), in dir's state, against a
// server its client left (pid 820, reparented, uid 1000): the named pid
// gone, a zombie, or another process started after the server proves the
// client gone (owner-dead, attributed to owner); the controls — the named
// process alive, the server's group still its terminal's foreground, no
// marker — do not.
func PIDMarkCases(t *testing.T, c client.Client, dir, env, owner string) {
	t.Helper()
	const uid = 1000
	server := func(env ...string) platform.Process {
		return Proc(820, 1, 800, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, env)
	}
	marked := server(env + "=900")
	foreground := marked
	foreground.TTY, foreground.TPGID = 0x8801, 800
	zombie := Proc(900, 1, 900, uid, []string{"node"}, nil)
	zombie.State = 'Z'
	reused := Proc(900, 1, 900, 0, []string{"/usr/sbin/cron"}, nil) // pid 900 started after 820
	live := Proc(700, 500, 700, uid, []string{"node", "client"}, nil)
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		dead  bool
		owned bool
	}{
		{"the named pid gone", []platform.Process{marked}, true, true},
		{"the named pid a zombie", []platform.Process{marked, zombie}, true, true},
		{"the named pid another process now", []platform.Process{marked, reused}, true, true},
		{"control: the named process lives", []platform.Process{server(env + "=700"), live}, false, true},
		{"control: its group is its terminal's foreground", []platform.Process{foreground}, false, true},
		{"control: no marker", []platform.Process{server()}, false, false},
	} {
		r := Scan(t, c, dir, uid, tc.procs...)
		f := Finding(r, 820)
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		if f.Has(scan.OwnerDead) != tc.dead || (f.Owner == owner) != tc.owned {
			t.Errorf("%s: reasons %v, owner %q; want owner-dead %v, owner %s %v\n%q", tc.name, f.Reasons, f.Owner, tc.dead, owner, tc.owned, f.Evidence)
		}
		if tc.dead && !f.SpokenFor(r.Tree.Snap, uid) {
			t.Errorf("%s: the marker does not speak for its own process's user", tc.name)
		}
	}
}

// HeadlessCases checks that c's CLI, run as argv (pid 810 of uid 1000, a
// job in a shell's session: process group 800, led by what the user typed,
// with a server below it, pid 820), is found headless once its group's
// leader is gone and it has no terminal: owner-dead, attributed to owner,
// the tree whole. The controls: the leader alive (a job the user put in the
// background); the group its terminal's foreground; the group its own
// session's (a daemon a client shares); a command that is not the CLI. In
// the controls the CLI, alive and unproven, is a session and no finding.
func HeadlessCases(t *testing.T, c client.Client, dir string, argv []string, owner string) {
	t.Helper()
	const uid = 1000
	cli := Proc(810, 1, 800, uid, argv, nil)
	server := Proc(820, 810, 800, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	leader := Proc(800, 400, 800, uid, []string{"node", "/usr/bin/launcher"}, nil)
	foreground := cli
	foreground.TTY, foreground.TPGID = 0x8801, 800
	daemon := cli
	daemon.SID = 800
	other := Proc(810, 1, 800, uid, []string{"node", "/srv/app/server.js"}, nil)
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		dead  bool
	}{
		{"its launcher gone, no terminal", []platform.Process{cli, server}, true},
		{"control: its launcher lives", []platform.Process{cli, server, leader}, false},
		{"control: its terminal's foreground", []platform.Process{foreground, server}, false},
		{"control: its group its own session's", []platform.Process{daemon, server}, false},
		{"control: not the CLI", []platform.Process{other, server}, false},
	} {
		r := Scan(t, c, dir, uid, tc.procs...)
		f := Finding(r, 810)
		if tc.name == "control: its launcher lives" {
			if f != nil && f.Has(scan.OwnerDead) {
				t.Errorf("%s: %v %q", tc.name, f.Reasons, f.Evidence)
			}
			continue
		}
		if _, live := r.LiveClient(810); f == nil && !tc.dead && live && tc.name != "control: not the CLI" {
			continue // the CLI, alive and unproven: a session (scan.ApplyLiveClients)
		}
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		if f.Has(scan.OwnerDead) != tc.dead || tc.dead && (f.Owner != owner || len(f.Members) != 2) {
			t.Errorf("%s: reasons %v, owner %q, %d members; want owner-dead %v (owner %s, 2 members)\n%q", tc.name, f.Reasons, f.Owner, len(f.Members), tc.dead, owner, f.Evidence)
		}
	}
}
