package copilot

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// copilotDir is ~/.copilot as `copilot mcp add` leaves it: a local server
// and a remote one, which runs nothing here.
func copilotDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".copilot")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "mcp-config.json"), []byte(`{"mcpServers": {
  "quiet": {"type": "local", "command": "/opt/srv/quiet-helper", "args": ["--stdio"], "tools": ["*"]},
  "web": {"type": "http", "url": "https://example.com/mcp"}
}}`), 0o600)
	return dir
}

// COPILOT_LOADER_PID names the native copilot: gone, the session is over;
// the local server's kind comes from the config, the remote one is none.
func TestLoaderMark(t *testing.T) {
	dir := copilotDir(t)
	clienttest.PIDMarkCases(t, Client, dir, EnvPID, OwnerName)
	if raw := (Adapter{}).Read(dir); len(raw.Servers) != 1 || raw.Servers[0].Name != "quiet" {
		t.Errorf("servers %+v, want the local one alone", raw.Servers)
	}
	server := clienttest.Proc(820, 1, 800, 1000, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{EnvPID + "=810"})
	if f := clienttest.Finding(clienttest.Scan(t, Client, dir, 1000, server), 820); f == nil || f.Kind != scan.KindMCP {
		t.Errorf("the config's server: %+v, want kind mcp", f)
	}
}

// Headless: the CLI left running once what the user typed is gone, with no
// terminal to reach it by: its tree is owner-dead (clienttest.HeadlessCases,
// with its controls).
func TestHeadless(t *testing.T) {
	clienttest.HeadlessCases(t, Client, copilotDir(t), []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot"}, OwnerName)
}

// session writes a session dir of copilotDir's with the locks named by
// pid (each holding its pid, as copilot writes it, unless content says
// otherwise), and returns its id.
func session(t *testing.T, dir, id string, content map[int]string, pids ...int) string {
	t.Helper()
	sdir := filepath.Join(dir, stateDir, id)
	os.MkdirAll(sdir, 0o700)
	os.WriteFile(filepath.Join(sdir, "workspace.yaml"), []byte("id: "+id+"\n"), 0o600)
	for _, pid := range pids {
		c, ok := content[pid]
		if !ok {
			c = strconv.Itoa(pid) + "\n"
		}
		os.WriteFile(filepath.Join(sdir, "inuse."+strconv.Itoa(pid)+".lock"), []byte(c), 0o644)
	}
	return id
}

// A session's lock whose copilot is gone ties the servers that carry the
// session's id to it: owner-dead, with the lock as the proof — what -p
// mode's servers carry (no COPILOT_LOADER_PID). The controls: the lock's
// pid held by a live process (no start time tells copilot from a later
// process: no tie, untracked); a resumed session's two locks; a lock that
// holds another pid; another user's server with the same id.
func TestSessionLock(t *testing.T) {
	const uid = 1000
	const id = "b8c4d4ba-2cb0-4c84-9115-1160c0f4d985"
	server := func(u uint32) platform.Process {
		return clienttest.Proc(820, 1, 820, u, []string{"node", "/opt/srv/stubborn.mjs"}, []string{EnvSession + "=" + id})
	}
	live := clienttest.Proc(810, 400, 800, uid, []string{"/opt/copilot-linux-x64/copilot", "-p", "hi"}, nil)
	zombie := live
	zombie.State = 'Z'
	for _, tc := range []struct {
		name    string
		locks   []int
		content map[int]string
		procs   []platform.Process
		dead    bool
	}{
		{"its copilot gone", []int{810}, nil, []platform.Process{server(uid)}, true},
		{"its copilot a zombie", []int{810}, nil, []platform.Process{server(uid), zombie}, true},
		{"control: the lock's pid alive", []int{810}, nil, []platform.Process{server(uid), live}, false},
		{"control: a resumed session's two locks", []int{810, 811}, nil, []platform.Process{server(uid)}, false},
		{"control: the lock holds another pid", []int{810}, map[int]string{810: "999\n"}, []platform.Process{server(uid)}, false},
		{"control: another user's server", []int{810}, nil, []platform.Process{server(uid + 1)}, false},
	} {
		dir := copilotDir(t)
		session(t, dir, id, tc.content, tc.locks...)
		f := clienttest.Finding(clienttest.Scan(t, Client, dir, uid, tc.procs...), 820)
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		ev := strings.Join(f.Evidence, "; ")
		if f.Has(scan.OwnerDead) != tc.dead || (f.Owner == OwnerName) != tc.dead || tc.dead && !strings.Contains(ev, "the session's lock "+filepath.Join(dir, stateDir, id, "inuse.810.lock")) {
			t.Errorf("%s: owner %q, reasons %v, evidence %q; want owner-dead by the lock %v", tc.name, f.Owner, f.Reasons, ev, tc.dead)
		}
	}
}

// Only the newest sessions' dirs are listed: copilot keeps every
// session's dir, and a lock matters only while its tree lives.
func TestSessionLocksBounded(t *testing.T) {
	dir := copilotDir(t)
	for i := range maxSessionsRead + 5 {
		id := session(t, dir, "s-"+strconv.Itoa(i), nil, 1000+i)
		at := time.Now().Add(time.Duration(i-200) * time.Minute)
		os.Chtimes(filepath.Join(dir, stateDir, id), at, at)
	}
	raw := Adapter{}.Read(dir)
	if len(raw.Locks) != maxSessionsRead || len(raw.Errors()) != 0 {
		t.Fatalf("%d locks, problems %v; want %d", len(raw.Locks), raw.Errors(), maxSessionsRead)
	}
	for _, l := range raw.Locks {
		if l.PID < 1005 {
			t.Errorf("an old session's lock was read: %+v", l)
		}
	}
}

// BenchmarkReadLocks is a long-time user's ~/.copilot: 2,000 sessions'
// dirs, each with its workspace and a lock (copilot keeps them all).
func BenchmarkReadLocks(b *testing.B) {
	dir := filepath.Join(b.TempDir(), ".copilot")
	for i := range 2000 {
		sdir := filepath.Join(dir, stateDir, "s-"+strconv.Itoa(i))
		os.MkdirAll(filepath.Join(sdir, "checkpoints"), 0o700)
		os.WriteFile(filepath.Join(sdir, "workspace.yaml"), []byte("id: x\n"), 0o600)
		os.WriteFile(filepath.Join(sdir, "inuse."+strconv.Itoa(10000+i)+".lock"), []byte(strconv.Itoa(10000+i)+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "mcp-config.json"), []byte(`{"mcpServers": {}}`), 0o600)
	b.ResetTimer()
	for b.Loop() {
		if raw := (Adapter{}).Read(dir); len(raw.Locks) != maxSessionsRead {
			b.Fatalf("%d locks", len(raw.Locks))
		}
	}
}

// Copilot's /new keeps the previous session open in the same copilot,
// with its servers: two session dirs whose locks name the live copilot
// and two sets of its servers are a set a session, as the client means
// it — the advice says so, not "likely ended threads'". The control: one
// session's lock and the same two sets — the second set is named likely
// an ended thread's.
func TestNewKeepsASetPerSession(t *testing.T) {
	const uid = 1000
	old := uint64(clienttest.Taken.Add(-time.Hour).Unix()) * 100
	copilot := clienttest.Proc(810, 1, 810, uid, []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot"}, nil)
	srv := func(pid int) platform.Process {
		p := clienttest.Proc(pid, 810, 810, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, []string{EnvPID + "=810"})
		p.StartTicks = old
		return p
	}
	for _, tc := range []struct {
		name     string
		sessions []string
		want     string
	}{
		{"/new: two open sessions", []string{"s-one", "s-two"}, "keep 2 sessions open in it"},
		{"control: one open session", []string{"s-one"}, "likely ended threads'"},
	} {
		dir := copilotDir(t)
		for _, id := range tc.sessions {
			session(t, dir, id, nil, 810)
		}
		_, got := clienttest.Advise(t, Client, dir, uid, "mcp-server-sets", copilot, srv(820), srv(821))
		if len(got) != 1 || !strings.Contains(got[0], tc.want) || strings.Contains(got[0], "likely") != strings.Contains(tc.want, "likely") {
			t.Errorf("%s: advice %q, want it to say %q", tc.name, got, tc.want)
		}
	}
}
