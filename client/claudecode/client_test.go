package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// home makes a home with ~/.claude: a session file per session given
// (pid, session id, procStart), and ~/.claude.json declaring servers.
func home(t *testing.T, sessions ...Session) string {
	t.Helper()
	h := t.TempDir()
	dir := filepath.Join(h, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		b, _ := json.Marshal(map[string]any{"pid": s.PID, "sessionId": s.SessionID, "cwd": "/w", "startedAt": s.StartedAt,
			"procStart": s.ProcStart, "version": "2.1.197", "kind": "interactive", "entrypoint": "cli"})
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", s.PID)), b, 0o600)
	}
	os.WriteFile(filepath.Join(h, ".claude.json"), []byte(`{
  "hasCompletedOnboarding": true,
  "mcpServers": {
    "stubborn": {"type": "stdio", "command": "/opt/srv/stubborn", "args": ["--quiet"]},
    "remote": {"type": "http", "url": "https://example.com/mcp"}
  },
  "projects": {"/w": {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-server"]}}}}
}`), 0o600)
	return h
}

// TestReadRaw: the session files and the stdio servers of the global
// config and its projects are read; an http server is not a process; a
// file that is not a session file is a problem, and a name that is not a
// pid is not read at all.
func TestReadRaw(t *testing.T) {
	h := home(t, Session{PID: 4242, SessionID: "s-1", StartedAt: 1, ProcStart: "900"})
	sessions := filepath.Join(h, ".claude", "sessions")
	os.WriteFile(filepath.Join(sessions, "77.json"), []byte(`{"pid": 78}`), 0o600)
	os.WriteFile(filepath.Join(sessions, "notes.json"), []byte(`garbage`), 0o600)
	raw := ReadRaw(filepath.Join(h, ".claude"))
	if raw.Missing || len(raw.Sessions) != 1 || raw.Sessions[0].SessionID != "s-1" || raw.Sessions[0].ProcStart != "900" {
		t.Errorf("sessions %+v (missing %v)", raw.Sessions, raw.Missing)
	}
	if len(raw.Problems) != 1 || !strings.Contains(raw.Problems[0].Msg, "want pid 77") {
		t.Errorf("problems %+v, want 77.json's", raw.Problems)
	}
	var names []string
	for _, s := range raw.Servers {
		names = append(names, s.Name+"="+s.Command)
	}
	if want := []string{"stubborn=/opt/srv/stubborn", "docs=npx"}; !reflect.DeepEqual(names, want) {
		t.Errorf("servers %v, want %v", names, want)
	}
}

// TestDeadSessionsServers: a claude SIGKILLed leaves its session file and
// its stubborn servers, which carry its session id: owner-dead, the file
// and the pid named, kind mcp from the config. Controls: the same server
// while its claude lives is that claude's leak, not owner-dead; with the
// pid taken by another process (another start time) it is owner-dead too.
func TestDeadSessionsServers(t *testing.T) {
	const uid = 1000
	h := home(t, Session{PID: 500, SessionID: "s-dead", StartedAt: 36000 * 1000, ProcStart: "49999"})
	dir := filepath.Join(h, ".claude")
	server := clienttest.Proc(600, 1, 500, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-dead"})
	for _, tc := range []struct {
		name     string
		procs    []platform.Process
		reasons  []scan.Reason
		evidence string
	}{
		{"its claude is gone", nil, []scan.Reason{scan.Reparented, scan.OwnerDead}, "the session file " + filepath.Join(dir, "sessions", "500.json") + " names pid 500: owner pid 500 is gone"},
		{"another process has its pid", []platform.Process{clienttest.Proc(500, 1, 500, uid, []string{"bash"}, nil)}, []scan.Reason{scan.Reparented, scan.OwnerDead}, "is another process now"},
		{"control: its claude lives", []platform.Process{clienttest.Proc(500, 1, 500, uid, []string{"claude"}, nil)}, []scan.Reason{scan.Reparented}, "left behind by the live claude pid 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := append(tc.procs, server)
			if tc.name == "control: its claude lives" {
				procs[0].StartTicks = 49999 // the session file's procStart: the same claude
			}
			r := clienttest.Scan(t, Client, dir, uid, procs...)
			f := clienttest.Finding(r, 600)
			if f == nil || !reflect.DeepEqual(f.Reasons, tc.reasons) || f.Kind != scan.KindMCP || f.Owner != OwnerName ||
				!strings.Contains(strings.Join(f.Evidence, "; "), tc.evidence) {
				t.Fatalf("finding %+v, want reasons %v, kind mcp, owner %s, evidence %q", f, tc.reasons, OwnerName, tc.evidence)
			}
		})
	}
}

// TestLiveDetachedSessionIsOwned: `nohup claude -p … &` from a closed
// terminal is reparented, and its session file proves it live: no finding,
// and the gate's owned runs hold it. The control: without the session
// file it is a finding (kind acp, reparented).
func TestLiveDetachedSessionIsOwned(t *testing.T) {
	const uid = 1000
	claude := clienttest.Proc(500, 1, 500, uid, []string{"claude", "-p", "summarise"}, nil)
	claude.StartTicks = 50000
	for _, tc := range []struct {
		name     string
		sessions []Session
		want     bool
	}{
		{"its session file", []Session{{PID: 500, SessionID: "s-live", StartedAt: 36000 * 1000, ProcStart: "50000"}}, false},
		{"control: no session file", nil, true},
	} {
		r := clienttest.Scan(t, Client, filepath.Join(home(t, tc.sessions...), ".claude"), uid, claude)
		if got := clienttest.Finding(r, 500) != nil; got != tc.want {
			t.Errorf("%s: a finding: %v, want %v", tc.name, got, tc.want)
		}
		if _, owned := r.OwnedRun(500); owned == tc.want {
			t.Errorf("%s: owned %v", tc.name, owned)
		}
	}
}

// TestSessionFileSpeaksForItsOwner: a user's session file naming a root
// process (its pid and start time) ties nothing of root's and owns
// nothing: the root process's tree stays as the scan found it, and the
// claim is counted as ignored. The control: the user's own process is
// tied.
func TestSessionFileSpeaksForItsOwner(t *testing.T) {
	const user = 1001
	h := home(t, Session{PID: 500, SessionID: "s-x", StartedAt: 36000 * 1000, ProcStart: "50000"})
	for _, tc := range []struct {
		uid     uint32
		reasons []scan.Reason
	}{
		{0, []scan.Reason{scan.Reparented, scan.Untracked}},    // root's: the user's file says nothing of it
		{user, []scan.Reason{scan.Reparented, scan.OwnerDead}}, // the control
	} {
		victim := clienttest.Proc(600, 1, 600, tc.uid, []string{"/usr/sbin/daemon"}, []string{"CLAUDE_CODE_SESSION_ID=s-x"})
		r := clienttest.Scan(t, Client, filepath.Join(h, ".claude"), user, victim)
		f := clienttest.Finding(r, 600)
		if f == nil || !reflect.DeepEqual(f.Reasons, tc.reasons) {
			t.Errorf("uid %d: finding %+v, want reasons %v", tc.uid, f, tc.reasons)
		}
		if tc.uid == 0 && len(r.Ignored) == 0 {
			t.Errorf("uid 0: the user's claim was not counted as ignored")
		}
	}
}

// A session file of another boot names a claude that is gone, whatever
// process has its pid now.
func TestSessionOfAnotherBoot(t *testing.T) {
	s := Session{PID: 500, SessionID: "old", StartedAt: 1000, ProcStart: "50000"}
	snap := platform.NewSnapshot(nil, "boot", time.Hour, time.Unix(36000, 0))
	if o := s.owner(snap); o.Gone == "" || !strings.Contains(o.Gone, "before this boot") {
		t.Errorf("owner %+v, want gone: before this boot", o)
	}
	s.StartedAt = 35000 * 1000 // the control: during this boot
	if o := s.owner(snap); o.Gone != "" || o.Start != platform.FormatIdentity("boot", 50000) {
		t.Errorf("owner %+v, want pid 500 with its start", o)
	}
}

// On macOS Claude Code records procStart as `ps -o lstart=` in UTC, to the
// second. A live claude that started within that second (or a clock's
// rounding of it) is the session's: owned, no finding. The same pid
// started later is another process: the session's claude is gone, and
// what carries its session id is owner-dead, both starts named. The
// control: without the session file the live claude is a finding.
func TestMacSessionStart(t *testing.T) {
	const uid = 501
	recorded := clienttest.Taken.Add(-time.Hour) // 09:00:00 UTC, 1 January 1970
	const lstart = "Thu Jan  1 09:00:00 1970"    // what ps prints for it
	claude := func(at time.Time) platform.Process {
		p := clienttest.Proc(500, 1, 500, uid, []string{"claude", "-p", "summarise"}, nil)
		p.StartTicks = clienttest.MacStart(at)
		return p
	}
	server := clienttest.Proc(510, 1, 500, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-mac"})
	server.StartTicks = clienttest.MacStart(recorded.Add(time.Second))
	session := Session{PID: 500, SessionID: "s-mac", StartedAt: recorded.UnixMilli(), ProcStart: lstart}
	for _, tc := range []struct {
		name     string
		sessions []Session
		started  time.Time
		owned    bool // the claude is owned; else the server is owner-dead
	}{
		{"started in the recorded second", []Session{session}, recorded.Add(300 * time.Millisecond), true},
		{"a rounding later", []Session{session}, recorded.Add(1500 * time.Millisecond), true},
		{"the pid started again later", []Session{session}, recorded.Add(30 * time.Minute), false},
		{"control: no session file", nil, recorded.Add(300 * time.Millisecond), false},
	} {
		r := clienttest.ScanSnapshot(t, Client, filepath.Join(home(t, tc.sessions...), ".claude"), uid,
			clienttest.MacSnapshot(claude(tc.started), server))
		if got := clienttest.Finding(r, 500) == nil; got != tc.owned {
			t.Errorf("%s: claude owned %v, want %v", tc.name, got, tc.owned)
		}
		f := clienttest.Finding(r, 510)
		dead := f != nil && f.Has(scan.OwnerDead)
		if want := !tc.owned && tc.sessions != nil; dead != want {
			t.Errorf("%s: server owner-dead %v, want %v (%+v)", tc.name, dead, want, f)
		}
		if dead && !strings.Contains(strings.Join(f.Evidence, "; "), "pid 500 now is a process started 1970-01-01T09:30:00Z") {
			t.Errorf("%s: evidence %q does not name both starts", tc.name, f.Evidence)
		}
	}
}

// On Windows Claude Code records procStart as CIM's CreationDate.Ticks:
// .NET ticks of the creation time, to the microsecond. A live claude
// created then is the session's: owned. Gone, or its pid now a process
// created after the session file was written, its server is owner-dead;
// the pid held by an older process whose creation the record does not
// match is doubt, which spares. The controls: without the session file
// the dead claude's server is reparented only, never owner-dead.
func TestWindowsSessionStart(t *testing.T) {
	const uid = 1001
	created := clienttest.Taken.Add(-time.Hour).Add(123456 * time.Microsecond)
	ticks := strconv.FormatInt(netTicks(created, 0), 10)
	session := Session{PID: 5200, SessionID: "s-win", StartedAt: created.Add(800 * time.Millisecond).UnixMilli(), ProcStart: ticks}
	server := clienttest.WinProc(5210, 5200, created.Add(2*time.Second), uid,
		`"C:\Program Files\nodejs\node.exe" C:\Users\dev\AppData\Roaming\npm\node_modules\stubborn\index.js`,
		[]string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-win"})
	claude := func(at time.Time) []platform.WinProc {
		return []platform.WinProc{clienttest.WinProc(5200, 900, at, uid, `C:\Users\dev\.local\bin\claude.exe`, nil), server}
	}
	for _, tc := range []struct {
		name     string
		sessions []Session
		procs    []platform.WinProc
		dead     bool   // the server is owner-dead
		says     string // and its evidence says
	}{
		{"the claude lives", []Session{session}, claude(created), false, ""},
		{"the claude is gone", []Session{session}, []platform.WinProc{server}, true, "claude session s-win"},
		{"its pid is a younger process", []Session{session}, claude(created.Add(30 * time.Minute)), true, "after the session file was written"},
		{"its pid is an older process the record does not match", []Session{session}, claude(created.Add(-time.Minute)), false, ""},
		{"control: no session file, the claude gone", nil, []platform.WinProc{server}, false, ""},
	} {
		r := clienttest.ScanSnapshot(t, Client, filepath.Join(home(t, tc.sessions...), ".claude"), uid, clienttest.WindowsSnapshot(tc.procs...))
		f := clienttest.Finding(r, 5210)
		dead := f != nil && f.Has(scan.OwnerDead)
		if dead != tc.dead {
			t.Errorf("%s: server owner-dead %v, want %v (%+v)", tc.name, dead, tc.dead, f)
		}
		if dead && !strings.Contains(strings.Join(f.Evidence, "; "), tc.says) {
			t.Errorf("%s: evidence %q does not say %q", tc.name, f.Evidence, tc.says)
		}
		if tc.name == "the claude lives" && clienttest.Finding(r, 5200) != nil {
			t.Errorf("%s: the live claude is a finding", tc.name)
		}
	}
}

// A session id is tens of bytes: one of 118 KiB (user A's 120 such files
// once cost root's run 6 s, 145 MB and a 14 MB report) is not a session
// file, in the reader — whose output stays small — and again in Judge,
// which trusts no reader. The control: the same file with a real id is
// read and ties its claude's survivors.
func TestSessionIDBounded(t *testing.T) {
	huge := strings.Repeat("x", 118<<10)
	h := home(t, Session{PID: 500, SessionID: huge, StartedAt: 36000 * 1000, ProcStart: "50000"},
		Session{PID: 501, SessionID: "s-real", StartedAt: 36000 * 1000, ProcStart: "50000"})
	raw := ReadRaw(filepath.Join(h, ".claude"))
	if len(raw.Sessions) != 1 || raw.Sessions[0].SessionID != "s-real" {
		t.Errorf("sessions read: %d, want the real one alone", len(raw.Sessions))
	}
	if errs := raw.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "sessionId is 120832 bytes") {
		t.Errorf("problems %v, want the huge id named", errs)
	}
	// A reader that let a long one through: Judge refuses it all the same
	// (one past MaxValue fails the whole read, statedir.TestDecodeBoundsValues).
	raw.Sessions = append(raw.Sessions, Session{File: "/h/.claude/sessions/500.json", PID: 500, SessionID: strings.Repeat("x", 1<<10)})
	raw.Problems = nil
	b, _ := json.Marshal(raw)
	ev, problems, _ := Client.Decode(b, raw.Dir, raw.UID).Judge(nil)
	if len(ev.Ties) != 1 || ev.Ties[0].Value != "s-real" || len(problems) != 1 {
		t.Errorf("judged: %d ties, problems %v; want the real session's tie alone and the huge one a problem", len(ev.Ties), problems)
	}
}

// TestManyStaleSessions: Claude Code leaves the session file of a claude
// that was killed, so a home collects hundreds. They are read by need —
// a live pid's file first, then the newest — up to the bound: the newest
// stale file (this pass's leftovers' proof) and the live one are read,
// the oldest past the bound are said, and nothing is the owner's doubt.
// Before, more than 256 files were "none read", and every leftover of the
// user lost its proof for good.
func TestManyStaleSessions(t *testing.T) {
	h := home(t)
	dir := filepath.Join(h, ".claude", "sessions")
	write := func(pid int, id string, at time.Time) {
		b, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": id, "cwd": "/w", "startedAt": 1, "procStart": "900", "kind": "interactive"})
		path := filepath.Join(dir, fmt.Sprintf("%d.json", pid))
		os.WriteFile(path, b, 0o600)
		os.Chtimes(path, at, at)
	}
	// The live writer's record must be written after it started
	// (platform.RecordOwnerLive) and be the oldest: the stale records are
	// dated after it, in the next minutes.
	now := time.Now()
	base := now.Add(time.Minute)
	const stale = 3 * maxSessions
	for k := range stale {
		write(1<<22+k+1, fmt.Sprintf("stale-%d", k), base.Add(time.Duration(k)*time.Second)) // above pid_max: no such process
	}
	write(os.Getpid(), "live", now) // the oldest file, of its live writer
	raw := ReadRaw(filepath.Join(h, ".claude"))
	ids := map[string]bool{}
	for _, s := range raw.Sessions {
		ids[s.SessionID] = true
	}
	if len(raw.Sessions) != maxSessions || !ids["live"] || !ids[fmt.Sprintf("stale-%d", stale-1)] || ids["stale-0"] {
		t.Errorf("%d sessions read (live %v, newest %v, oldest %v); want %d with the live and the newest, not the oldest",
			len(raw.Sessions), ids["live"], ids[fmt.Sprintf("stale-%d", stale-1)], ids["stale-0"], maxSessions)
	}
	if len(raw.Problems) != 0 {
		t.Errorf("problems %v: stale files past the bound are no doubt", raw.Problems)
	}
	if want := fmt.Sprintf("the oldest %d of the session files, past the bound", stale+1-maxSessions); len(raw.Skipped) != 1 || !strings.Contains(raw.Skipped[0], want) {
		t.Errorf("skipped %q, want %q", raw.Skipped, want)
	}
}

// BenchmarkReadRawStale is one read of a config dir holding N stale
// session files (pids no process has) beside one live one.
func BenchmarkReadRawStale(b *testing.B) {
	for _, n := range []int{10, 300, 2000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := b.TempDir()
			dir := filepath.Join(h, ".claude", "sessions")
			os.MkdirAll(dir, 0o700)
			for k := range n {
				pid := 4000000 + k
				body, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": fmt.Sprintf("s-%d", k), "cwd": "/w", "startedAt": 1, "procStart": "900", "version": "2.1.331", "kind": "interactive"})
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", pid)), body, 0o600)
			}
			b.ResetTimer()
			for range b.N {
				ReadRaw(filepath.Join(h, ".claude"))
			}
		})
	}
}

// Merge keeps the session files a ReadChanged did not name, drops the
// ones it named and did not find (removed), and past the bound lets go
// of the oldest of claudes that are gone — never a live claude's, however
// old (control: the oldest dead one goes in its place).
func TestMergeKeepsTheLive(t *testing.T) {
	dir := "/h/.claude"
	now := time.Now()
	file := func(pid int) string { return filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", pid)) }
	prev := &Raw{}
	prev.Dir = dir
	// This test's own process is a live claude, and the oldest by far.
	prev.Sessions = append(prev.Sessions, Session{File: file(os.Getpid()), PID: os.Getpid(), SessionID: "live", StartedAt: now.UnixMilli()})
	for k := 1; k < maxSessions; k++ {
		pid := 4000000 + k
		prev.Sessions = append(prev.Sessions, Session{File: file(pid), PID: pid, SessionID: fmt.Sprintf("dead-%d", k), StartedAt: now.Add(time.Hour + time.Duration(k)*time.Second).UnixMilli()})
	}
	prev.Tools = []ToolCall{{Session: "dead-1"}, {Session: "dead-2"}}
	next := &Raw{}
	next.Dir = dir
	next.Sessions = []Session{
		{File: file(4200000), PID: 4200000, SessionID: "new", StartedAt: now.Add(2 * time.Hour).UnixMilli()},
		{File: file(4200001), PID: 4200001, SessionID: "new-2", StartedAt: now.Add(2 * time.Hour).UnixMilli()},
	}
	removed := fmt.Sprintf("sessions/%d.json", 4000000+5)
	got := Adapter{}.Merge(prev, next, []string{"sessions/4200000.json", "sessions/4200001.json", removed}, platform.EUID())
	ids := map[string]bool{}
	for _, s := range got.Sessions {
		ids[s.SessionID] = true
	}
	switch {
	case len(got.Sessions) != maxSessions:
		t.Errorf("%d sessions, want the bound %d", len(got.Sessions), maxSessions)
	case !ids["live"]:
		t.Error("the live claude's session, the oldest, was let go of")
	case ids["dead-1"]:
		t.Error("control: the oldest dead claude's session was kept")
	case !ids["new"] || ids["dead-5"]:
		t.Errorf("the named: new %v, removed %v; want the new one and not the removed", ids["new"], ids["dead-5"])
	}
	if len(got.Tools) != 1 || got.Tools[0].Session != "dead-2" {
		t.Errorf("tool calls %+v: want dead-2's alone (dead-1's session was let go of)", got.Tools)
	}
}

// A watch's changed names are relative paths as the OS spells them
// (sessions\<pid>.json on Windows): ReadChanged reads the session file a
// name names, and nothing it does not (the control: the file not named).
func TestReadChangedByName(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sessions"), 0o700)
	for _, pid := range []int{4100001, 4100002} {
		body, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": fmt.Sprintf("s-%d", pid), "cwd": dir, "startedAt": 1, "procStart": "900", "kind": "interactive"})
		os.WriteFile(filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", pid)), body, 0o600)
	}
	got := Adapter{}.ReadChanged(dir, []string{filepath.Join("sessions", "4100002.json")})
	if len(got.Sessions) != 1 || got.Sessions[0].PID != 4100002 {
		t.Fatalf("read %+v, want the named session file's alone (4100002)", got.Sessions)
	}
}
