package declared

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// spec is a client reaper ships no adapter for, as a policy declares it:
// ~/.agentx/sessions/*.json, each {"pid", "sessionId", "startedAt"}, its
// spawned processes carrying AGENTX_SESSION=<sessionId>.
var spec = Spec{Name: "agentx", Dir: ".agentx/sessions", Pattern: "*.json", PID: "pid", Started: "startedAt",
	ID: "sessionId", Env: "AGENTX_SESSION"}

// at is a start time in the made-up table's clock: the table was read at
// clienttest.Taken, 10 hours after a boot at the epoch, and a process of
// pid N started N seconds after boot (clienttest.Proc).
func at(sec float64) string {
	return time.Unix(0, int64(sec*1e9)).UTC().Format(time.RFC3339Nano)
}

// session is one session file's content.
func session(pid int, id, started string) string {
	return `{"pid": ` + strconv.Itoa(pid) + `, "sessionId": "` + id + `", "startedAt": "` + started + `", "cwd": "/home/u"}`
}

var fixture = clienttest.Fixture{Dir: ".agentx/sessions", Files: map[string]string{
	".agentx/sessions/800.json": session(800, "s-800", at(800.5)),
}}

// The contract every client passes, for a declared one too.
func TestConformance(t *testing.T) {
	clienttest.Conformance(t, New(spec), fixture)
}

// FuzzRead: whatever a user writes in a session file, Read, Decode and
// Judge neither panic nor hang, and every claim is the reader's uid's.
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, New(spec), fixture)
}

// home writes files (name: content) in a session dir of a fresh home.
func home(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".agentx", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A server that carries a session's id is tied to the session's process:
// owner-dead once that process is gone, or another process by its start
// (started after the session did), with the session file as the proof.
// The controls: the process lives (its leak, not owner-dead); a server
// without the id; the same id on another user's server (a user's file
// speaks for that user's processes only).
func TestSessionTies(t *testing.T) {
	const uid = 1000
	dir := home(t, map[string]string{"800.json": session(800, "s-800", at(800.5))})
	server := clienttest.Proc(820, 1, 820, uid, []string{"node", "/opt/srv/server.js"}, []string{"AGENTX_SESSION=s-800"})
	client := clienttest.Proc(800, 400, 800, uid, []string{"node", "/opt/agentx/cli.js"}, nil)
	reused := clienttest.Proc(800, 1, 800, uid, []string{"/usr/bin/python3"}, nil)
	reused.StartTicks = 900 * 100 // started at 900 s, after the session (800.5 s)
	unmarked := clienttest.Proc(820, 1, 820, uid, []string{"node", "/opt/srv/server.js"}, nil)
	other := clienttest.Proc(820, 1, 820, uid+1, []string{"node", "/opt/srv/server.js"}, []string{"AGENTX_SESSION=s-800"})
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		owner string
		dead  string // evidence that proves it, "" for not owner-dead
	}{
		{"the session's process gone", []platform.Process{server}, "agentx", "the session file " + filepath.Join(dir, "800.json") + " names pid 800: owner pid 800 is gone"},
		{"its pid another process now", []platform.Process{server, reused}, "agentx", "pid 800 is another process now"},
		{"control: the session's process lives", []platform.Process{server, client}, "agentx", ""},
		{"control: no session id", []platform.Process{unmarked}, "", ""},
		{"control: another user's server", []platform.Process{other}, "", ""},
	} {
		r := clienttest.Scan(t, New(spec), dir, uid, tc.procs...)
		f := clienttest.Finding(r, 820)
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		ev := strings.Join(f.Evidence, "; ")
		if f.Owner != tc.owner || f.Has(scan.OwnerDead) != (tc.dead != "") || !strings.Contains(ev, tc.dead) {
			t.Errorf("%s: owner %q, reasons %v, evidence %q; want owner %q, owner-dead by %q", tc.name, f.Owner, f.Reasons, ev, tc.owner, tc.dead)
		}
	}
}

// A session that started before this boot names no process now, whatever
// has its pid; the control is the same session started after boot. (This
// table's boot is at 100,000 s after the epoch: a process of pid N started
// N seconds later.)
func TestSessionBeforeBoot(t *testing.T) {
	const uid = 1000
	server := clienttest.Proc(820, 1, 820, uid, []string{"node", "/opt/srv/server.js"}, []string{"AGENTX_SESSION=s-800"})
	client := clienttest.Proc(800, 400, 800, uid, []string{"node", "/opt/agentx/cli.js"}, nil)
	init := clienttest.Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)
	for _, tc := range []struct {
		started string
		dead    bool
	}{{at(50000), true}, {at(100800.5), false}} {
		dir := home(t, map[string]string{"800.json": session(800, "s-800", tc.started)})
		snap := platform.NewSnapshot([]platform.Process{init, server, client}, clienttest.Boot, 10*time.Hour, time.Unix(136000, 0))
		f := clienttest.Finding(clienttest.ScanSnapshot(t, New(spec), dir, uid, snap), 820)
		if f == nil || f.Has(scan.OwnerDead) != tc.dead {
			t.Errorf("started %s: %+v; want owner-dead %v", tc.started, f, tc.dead)
		}
	}
}

// An id two files give ties nothing: which process is the session's is
// not known. The control: the id in one file ties.
func TestDuplicateSessionTiesNothing(t *testing.T) {
	const uid = 1000
	server := clienttest.Proc(820, 1, 820, uid, []string{"node", "/opt/srv/server.js"}, []string{"AGENTX_SESSION=s-1"})
	both := home(t, map[string]string{"800.json": session(800, "s-1", at(800.5)), "810.json": session(810, "s-1", at(810.5))})
	ev, problems, warnings := clienttest.Judge(New(spec), both, uid, nil)
	if len(ev.Ties) != 0 || len(problems) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "session s-1 is in 2 files") {
		t.Errorf("two files, one id: ties %+v, problems %v, warnings %q; want no tie and a warning", ev.Ties, problems, warnings)
	}
	one := home(t, map[string]string{"800.json": session(800, "s-1", at(800.5))})
	if f := clienttest.Finding(clienttest.Scan(t, New(spec), one, uid, server), 820); f == nil || !f.Has(scan.OwnerDead) {
		t.Errorf("control, one file: %+v; want owner-dead", f)
	}
}

// What the read takes from a file: the pid from a key or the file's name,
// the id as a string or a number, the start as RFC 3339, milliseconds or
// seconds since the epoch. A file that is not a session is a problem
// naming it (its user's trees are in doubt), never evidence; files the
// pattern does not match are not read.
func TestRead(t *testing.T) {
	byName := spec
	byName.PID, byName.PIDFromName = "", true
	for _, tc := range []struct {
		name    string
		spec    Spec
		file    string
		want    Session
		problem string
	}{
		{"pid key, ms", spec, `{"pid": 812, "sessionId": "a", "startedAt": 1764000000123}`, Session{PID: 812, ID: "a", Started: 1764000000123}, ""},
		{"pid string, seconds", spec, `{"pid": "812", "sessionId": 7, "startedAt": 1764000000}`, Session{PID: 812, ID: "7", Started: 1764000000000}, ""},
		{"no start", spec, `{"pid": 812, "sessionId": "a"}`, Session{PID: 812, ID: "a"}, ""},
		{"pid from the name", byName, `{"sessionId": "a"}`, Session{PID: 4242, ID: "a"}, ""},
		{"no pid", spec, `{"sessionId": "a"}`, Session{}, `no pid in "pid"`},
		{"pid 1", spec, `{"pid": 1, "sessionId": "a"}`, Session{}, `no pid in "pid"`},
		{"no id", spec, `{"pid": 812}`, Session{}, `no id in "sessionId"`},
		{"bad start", spec, `{"pid": 812, "sessionId": "a", "startedAt": "yesterday"}`, Session{}, `"startedAt" is not a time`},
		{"not an object", spec, `[1, 2]`, Session{}, "not a JSON object"},
		{"an id too long", spec, `{"pid": 812, "sessionId": "` + strings.Repeat("x", 300) + `"}`, Session{}, "sessionId"},
	} {
		dir := home(t, map[string]string{"4242-x.json": tc.file, "notes.txt": "not read"})
		raw := Adapter{tc.spec}.Read(dir)
		errs := raw.Errors()
		switch {
		case tc.problem != "":
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.problem) || !strings.Contains(errs[0].Error(), "4242-x.json: not a session file of agentx") || len(raw.Sessions) != 0 {
				t.Errorf("%s: problems %v, sessions %+v; want one naming the file: %s", tc.name, errs, raw.Sessions, tc.problem)
			}
		case len(errs) != 0 || len(raw.Sessions) != 1:
			t.Errorf("%s: problems %v, sessions %+v", tc.name, errs, raw.Sessions)
		default:
			got := raw.Sessions[0]
			got.File = ""
			if got != tc.want {
				t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
			}
		}
	}
}

// More session files than the bound are read by need: the newest up to
// it. Where the files are named by their pid, the oldest of processes
// that are gone are said and cast no doubt — a client leaves the files of
// the processes that were killed (the pids here name no process); where
// the pid is inside, what was not read may be a live process's: the
// owner's doubt, with the newest read all the same.
func TestReadBound(t *testing.T) {
	files := map[string]string{}
	for i := range maxSessions + 1 {
		files[strconv.Itoa(1<<22+i)+".json"] = session(1<<22+i, "s", at(1))
	}
	named := spec
	named.PIDFromName = true
	raw := Adapter{named}.Read(home(t, files))
	if errs := raw.Errors(); len(errs) != 0 || len(raw.Sessions) != maxSessions || len(raw.Skipped) != 1 || !strings.Contains(raw.Skipped[0], "the oldest 1 of the session files, past the bound of 256") {
		t.Errorf("named by pid, %d files: problems %v, %d sessions, skipped %q", len(files), raw.Errors(), len(raw.Sessions), raw.Skipped)
	}
	raw = Adapter{spec}.Read(home(t, files))
	if errs := raw.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "not named by a pid") || len(raw.Sessions) != maxSessions {
		t.Errorf("the pid inside, %d files: problems %v, %d sessions", len(files), errs, len(raw.Sessions))
	}
}

// A reader child is told a declared client by its Spec: FromSpec makes
// the same client again, and refuses what a policy's loader would.
func TestFromSpec(t *testing.T) {
	c := New(spec)
	d, ok := c.(interface{ Spec() []byte })
	if !ok {
		t.Fatal("a declared client has no Spec")
	}
	again, err := FromSpec(d.Spec())
	if err != nil || again.Info().Name != "agentx" || string(again.(interface{ Spec() []byte }).Spec()) != string(d.Spec()) {
		t.Fatalf("FromSpec(%s): %v, %v", d.Spec(), again, err)
	}
	for _, bad := range []string{`{}`, `garbage`, `{"name":"x","dir":"../etc","pattern":"*","id":"i","env":"E"}`, `{"name":"x","dir":".x","pattern":"[","id":"i","env":"E"}`} {
		if _, err := FromSpec([]byte(bad)); err == nil {
			t.Errorf("FromSpec(%s): no error", bad)
		}
	}
}

// Specs takes the declared clients that keep session files from a policy.
func TestSpecs(t *testing.T) {
	pol, err := policy.Parse("p.toml", []byte(`version = 1
[[client]]
name = "agentx"
command = '(^|/)agentx( |$)'
session_files = "~/.agentx/sessions/*.json"
session_started = "startedAt"
session_env = "AGENTX_SESSION"
session_id = "sessionId"

[[client]]
name = "plain"
command = '(^|/)plain( |$)'
`), policy.Clients{})
	if err != nil {
		t.Fatal(err)
	}
	got := Specs(pol)
	if len(got) != 1 || got[0] != spec {
		t.Errorf("Specs: %+v, want [%+v]", got, spec)
	}
}
