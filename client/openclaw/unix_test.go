//go:build unix

// OpenClaw's records as its Linux and macOS gateways write them, beside
// Unix tables and with Unix paths. OpenClaw on native Windows (its docs'
// less stable path; WSL2, which they recommend, is Linux) is not checked
// yet: docs/windows.md.

package openclaw

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// A live gateway holding three stdio MCP servers (each under its relay and
// anchor) for one live session, with mcp.sessionIdleTtlMs unset: advice
// names the setting, with the count by server and the sessions. Controls:
// the TTL set and one pool per session gives none; a dead gateway gives
// none.
func TestAdviseMCPPools(t *testing.T) {
	const dist = "/opt/openclaw/dist/process/"
	procs := []platform.Process{
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(201, 200, "node", []string{"node", dist + "spawn-broker/worker.js"}, nil, "/"),
	}
	pid := 210
	for k := 0; k < 3; k++ {
		procs = append(procs,
			p(pid, 201, "node", []string{"node", dist + "supervisor/service-child-relay.js"}, nil, "/"),
			p(pid+1, pid, "node", []string{"node", dist + "supervisor/service-child-group-anchor.js"}, nil, "/"),
			p(pid+2, pid+1, "node", []string{"node", "/srv/mcp/memory.js"}, nil, "/"))
		pid += 10
	}
	gw := &Gateway{StateDir: "/home/a/.openclaw", Owner: ledger.Owner{Name: OwnerName, PID: 200, Start: id(200)}}
	server := MCPServer{Server: scan.Server{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/home/a/.openclaw/openclaw.json"}}
	for _, tt := range []struct {
		name     string
		ttl      int64
		sessions int
		gw       *Gateway
		want     string
	}{
		{"three pools for one session, no TTL", 0, 1, gw, "warning openclaw-mcp-idle-ttl: gateway pid 200 (/home/a/.openclaw) holds 3 stdio MCP servers (memory ×3) for 1 live session,"},
		{"one per session, no TTL", 0, 3, gw, "info openclaw-mcp-idle-ttl"},
		{"control: TTL set, one per session", 600000, 3, gw, ""},
		{"control: the gateway is gone", 0, 1, &Gateway{StateDir: "/x", Owner: ledger.Owner{Name: OwnerName, PID: 4242}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := server
			srv.IdleTTLMs = tt.ttl
			var got []string
			for _, a := range adviceOf(procs, nil, &adviser{Dir: tt.gw.StateDir, Gateway: tt.gw, Servers: []MCPServer{srv}, LiveSessions: tt.sessions}, nil) {
				got = append(got, a.Severity+" "+a.ID+": "+a.Evidence+" | "+a.Setting)
			}
			all := strings.Join(got, "\n")
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("advice %s, want none", all)
			case tt.want != "" && (!strings.HasPrefix(all, tt.want) || !strings.Contains(all, "mcp.sessionIdleTtlMs in /home/a/.openclaw/openclaw.json")):
				t.Errorf("advice %q, want %q naming the setting", all, tt.want)
			}
		})
	}
}

func TestCodexAppServers(t *testing.T) {
	fx := newCodexFixture(t)
	tasks, errs := ReadTasks(fx.dir)
	if len(errs) > 0 || tasks == nil {
		t.Fatalf("ReadTasks: %v", errs)
	}
	if tasks.BadCodexRows != 1 {
		t.Errorf("%d bad codex rows, want the one that does not parse", tasks.BadCodexRows)
	}
	got := tasks.CodexAppServers(fx.snap, fx.servers)
	if len(got) != 1 || got[0].PID != 900 {
		t.Fatalf("app-servers %+v: want only pid 900, once (the other rows name another process now, or another user's)", got)
	}
	as := got[0]
	if as.LiveThreads != 3 {
		t.Errorf("%d live threads, want 3 (the bound ones)", as.LiveThreads)
	}
	want := map[int]struct {
		thread string
		ended  bool
		why    string
	}{
		911: {fx.threads[0], true, "tied to codex thread"},
		912: {fx.threads[1], true, "tied to codex thread"},
		913: {fx.threads[2], true, "tied to codex thread"},
		914: {fx.threads[3], false, "tied to codex thread"},
		915: {"", false, "several threads or servers"},
		916: {"", false, "several threads or servers"},
		917: {"", false, "no thread record"},
	}
	if len(as.Children) != len(want) {
		t.Errorf("%d children, want %d (not the shell, not a server's own child): %+v", len(as.Children), len(want), as.Children)
	}
	for _, ch := range as.Children {
		w, ok := want[ch.PID]
		if !ok {
			t.Errorf("pid %d counted as the app-server's MCP server", ch.PID)
			continue
		}
		if ch.Thread != w.thread || ch.Ended() != w.ended || !strings.Contains(ch.Why, w.why) || ch.Server != "docs" {
			t.Errorf("pid %d: thread %q ended %v why %q server %q; want thread %q ended %v why %q",
				ch.PID, ch.Thread, ch.Ended(), ch.Why, ch.Server, w.thread, w.ended, w.why)
		}
	}

	l := tasks.CodexLedger(as, ledger.Owner{Name: CodexOwnerName, PID: as.PID, Start: as.Start})
	if len(l.Runs) != 4 {
		t.Fatalf("%d runs, want the 4 tied servers: %+v", len(l.Runs), l.Runs)
	}
	for _, r := range l.Runs {
		ended := l.EndedSession(r.Session) != nil
		if ended != (r.PID != 914) || r.Kind != "mcp" || r.Start != fx.snap.Identity(fx.snap.Get(r.PID)) || r.Proof == "" {
			t.Errorf("run %+v: ended %v", r, ended)
		}
	}
}

// Without the thread records there is nothing to tie: the servers are
// counted, none is shown ended (the control of the real test's "the live
// thread's is not").
func TestCodexAppServersWithoutThreads(t *testing.T) {
	fx := newCodexFixture(t)
	db, err := sql.Open("sqlite", sqlitetest.URI(filepath.Join(fx.dir, "state", "openclaw.sqlite"), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	insert(t, db, `DELETE FROM plugin_state_entries WHERE namespace != 'app-server-processes'`)
	tasks, _ := ReadTasks(fx.dir)
	got := tasks.CodexAppServers(fx.snap, fx.servers)
	if len(got) != 1 || len(got[0].Children) != 7 || got[0].LiveThreads != 0 {
		t.Fatalf("%+v", got)
	}
	for _, ch := range got[0].Children {
		if ch.Ended() || ch.Thread != "" {
			t.Errorf("pid %d tied to %q with no thread records", ch.PID, ch.Thread)
		}
	}
}

func TestReadOpenClawMCPServers(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadMCPServers(dir); got != nil || err != nil {
		t.Fatalf("no config: %v, %v", got, err)
	}
	file := filepath.Join(dir, "openclaw.json")
	if err := os.WriteFile(file, []byte(openclawConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMCPServers(dir)
	if err != nil {
		t.Fatal(err)
	}
	uid := uint32(os.Getuid()) // the config's owner: whose servers they are
	want := []MCPServer{
		{Server: scan.Server{Name: "context7", Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"}, File: file, UID: uid}},
		{Server: scan.Server{Name: "docs", Command: "/opt/tools/docs-helper", Args: []string{"--stdio", "/srv/docs"}, File: file, UID: uid}},
		{Server: scan.Server{Name: "node", Command: "node", File: file, UID: uid}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers\n got %+v\nwant %+v", got, want)
	}
	os.WriteFile(file, []byte("{\n  mcp: { servers: { bad: { command: 7 } } }\n}\n"), 0o644)
	if _, err := ReadMCPServers(dir); err == nil || !strings.Contains(err.Error(), "mcp.servers.bad") {
		t.Errorf("wrong type: %v", err)
	}
	os.WriteFile(file, []byte("{\n  mcp: {\n    servers: 'x',\n  }\n}\n"), 0o644)
	if _, err := ReadMCPServers(dir); err == nil || !strings.HasPrefix(err.Error(), file+":3:") {
		t.Errorf("servers not an object: %v, want %s:3", err, file)
	}
}

func TestOpenClawStateDirs(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".openclaw", ".openclaw-work", ".clawdbot", ".config"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	explicit := t.TempDir()
	me := os.Getuid()
	got := StateDirs([]Home{{home, me}, {filepath.Join(home, "nope"), me}, {home, me}}, []string{explicit, "", filepath.Join(home, ".openclaw") + "/"})
	want := []string{explicit, filepath.Join(home, ".openclaw"), filepath.Join(home, ".openclaw-work"), filepath.Join(home, ".clawdbot")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dirs\n%q\nwant\n%q", got, want)
	}
	// The home of an account that does not own it (bin's /bin) is not
	// listed: nothing in it is that account's state.
	if got := StateDirs([]Home{{home, me + 1}}, nil); len(got) != 0 {
		t.Errorf("a home its account does not own gave %q", got)
	}
}

func TestReadOpenClawLocks(t *testing.T) {
	t.Run("lock from before this boot", func(t *testing.T) {
		dir := genB(t)
		writeJSON(t, filepath.Join(dir, "gateway.1a2b3c4d.lock"), map[string]any{
			"pid": 4242, "createdAt": bootTime.Add(-time.Hour).Format(time.RFC3339), "startTime": 720000})
		ls, _ := Read(dir, boot)
		if ls[0].Owner.Gone == "" || ls[0].Owner.Start != "" {
			t.Errorf("owner %+v: a lock of another boot names a gone gateway", ls[0].Owner)
		}
	})
	t.Run("legacy per-uid lock dir", func(t *testing.T) {
		dir := genB(t)
		os.Remove(filepath.Join(dir, "gateway.1a2b3c4d.lock"))
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		uid, _ := statedir.OwnerUID(dir)
		writeJSON(t, filepath.Join(tmp, "openclaw-"+strconv.Itoa(uid), "gateway.deadbeef.lock"), map[string]any{
			"pid": 777, "createdAt": lockTime.Format(time.RFC3339), "startTime": 99})
		ls, errs := Read(dir, boot)
		if len(errs) > 0 || ls[0].Owner.PID != 777 || ls[0].Owner.Start != boot.ID+":99" {
			t.Errorf("owner %+v, errs %v", ls[0].Owner, errs)
		}
	})
	t.Run("2026.9: the lock dir inside the state dir, newest createdAt wins", func(t *testing.T) {
		dir := genB(t)
		os.Remove(filepath.Join(dir, "gateway.1a2b3c4d.lock"))
		t.Setenv("TMPDIR", t.TempDir())
		uid, _ := statedir.OwnerUID(dir)
		locks := filepath.Join(dir, "tmp", "openclaw-"+strconv.Itoa(uid))
		write := func(name string, pid int, created time.Time, start int) {
			b, _ := json.Marshal(map[string]any{"pid": pid, "createdAt": created.Format(time.RFC3339Nano),
				"configPath": dir + "/openclaw.json", "startTime": start, "role": "gateway", "stateDir": dir})
			os.MkdirAll(locks, 0o700)
			// 2026.9.6 pads its locks with a long whitespace tail.
			if err := os.WriteFile(filepath.Join(locks, name), append(b, []byte(strings.Repeat(" ", 4000)+"\n")...), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("gateway.9f8e7d6c.lock", 880, lockTime.Add(-time.Minute), 11)
		write("gateway.state.lock", 881, lockTime, 12)
		os.WriteFile(filepath.Join(locks, "gateway.state.lock.sqlite"), []byte("SQLite format 3\x00"), 0o600)
		ls, errs := Read(dir, boot)
		if len(errs) > 0 || len(ls) == 0 || ls[0].Owner.PID != 881 || ls[0].Owner.Start != boot.ID+":12" {
			t.Fatalf("owner %+v, errs %v; want pid 881 (the newest lock) with its start", ls, errs)
		}
	})
	t.Run("a lock of another state dir or role is not this dir's gateway", func(t *testing.T) {
		dir := genB(t)
		writeJSON(t, filepath.Join(dir, "gateway.1a2b3c4d.lock"), map[string]any{
			"pid": 4242, "createdAt": lockTime.Format(time.RFC3339), "stateDir": "/elsewhere"})
		writeJSON(t, filepath.Join(dir, "state", "gateway.state.lock"), map[string]any{
			"pid": 4343, "createdAt": lockTime.Format(time.RFC3339), "role": "sqlite-maintenance"})
		ls, _ := Read(dir, boot)
		if ls[0].Owner.PID != 0 {
			t.Errorf("owner %+v, want unknown", ls[0].Owner)
		}
	})
	t.Run("no lock: owner unknown, all leases in one ledger", func(t *testing.T) {
		dir := genB(t)
		os.Remove(filepath.Join(dir, "gateway.1a2b3c4d.lock"))
		t.Setenv("TMPDIR", t.TempDir())
		ls, _ := Read(dir, boot)
		if len(ls) != 1 || ls[0].Owner.PID != 0 || len(ls[0].Runs) != 3 {
			t.Errorf("ledgers %+v", ls)
		}
	})
}

func TestReadTasksAndLedger(t *testing.T) {
	dir, _ := storeFixture(t)
	tasks, errs := ReadTasks(dir)
	if len(errs) > 0 || tasks == nil {
		t.Fatalf("ReadTasks: %v", errs)
	}
	if len(tasks.Execs) != 12 || tasks.Sessions == nil {
		t.Fatalf("%d exec rows, sessions %v", len(tasks.Execs), tasks.Sessions)
	}
	s := taskSnapshot()
	l := tasks.Ledger(ledger.Owner{Name: OwnerName, PID: 50}, s)
	runs := map[string]ledger.Run{}
	for _, r := range l.Runs {
		runs[r.ID] = r
	}
	sessions := map[string]ledger.SessionState{}
	for _, ss := range l.Sessions {
		sessions[ss.Key] = ss.State
	}
	tests := []struct {
		run     string
		pid     int
		session string
		state   ledger.SessionState
		note    string
	}{
		{"exec:one", 101, "agent:main:live", ledger.SessionActive, ""}, // the shell, not its sleep
		{"exec:two", 201, "agent:main:gone", ledger.SessionClosed, ""},
		{"exec:three", 301, "agent:main:reset (before its reset at", ledger.SessionReset, ""},
		{"exec:four", 401, "agent:main:archived", ledger.SessionClosed, ""},
		{"exec:five", 501, "agent:work:live", ledger.SessionActive, ""}, // another agent's store
		{"exec:six", 0, "agent:main:live", ledger.SessionActive, "ambiguous: 2 processes"},
		{"exec:seven", 0, "agent:main:live", ledger.SessionActive, "no live process ran this command then"},
		{"exec:nine", 901, "agent:main:live", ledger.SessionActive, ""}, // the command quoted
		{"exec:ten", 1001, "agent:main:gone", ledger.SessionClosed, ""},
		{"exec:eleven", 1101, "agent:main:live", ledger.SessionActive, ""},
		{"exec:twelve", 0, "agent:main:live", ledger.SessionActive, "no live process ran this command then"},
	}
	for _, tt := range tests {
		r, ok := runs[tt.run]
		if !ok {
			t.Errorf("%s: missing", tt.run)
			continue
		}
		if r.PID != tt.pid || !strings.HasPrefix(r.Session, tt.session) || sessions[r.Session] != tt.state || !strings.Contains(r.Note, tt.note) {
			t.Errorf("%s: pid %d session %q (%s) note %q; want pid %d session %q (%s) note %q",
				tt.run, r.PID, r.Session, sessions[r.Session], r.Note, tt.pid, tt.session, tt.state, tt.note)
		}
		if r.PID > 0 && (r.Start != s.Identity(s.Get(r.PID)) || !strings.Contains(r.Proof, "command text and start time")) {
			t.Errorf("%s: start %q proof %q", tt.run, r.Start, r.Proof)
		}
	}
	// The row says exec; a shell on a pseudo-terminal is a PTY whatever
	// ran it, and a run's kind is the finding's.
	for id, kind := range map[string]ledger.Kind{"exec:one": "exec", "exec:nine": "exec", "exec:ten": "pty"} {
		if runs[id].Kind != kind {
			t.Errorf("%s: kind %q, want %q", id, runs[id].Kind, kind)
		}
	}
	if r := runs["exec:five"]; r.State != ledger.RunDone {
		t.Errorf("a succeeded row whose process lives: state %s, want done", r.State)
	}
	if _, ok := runs["exec:eight"]; ok {
		t.Error("a failed row with no process is listed: nothing to say of it")
	}
}

// Without an agent store, no session state is known: no run is given a
// session, so none can be session-ended (the control of the real-gateway
// test's "without the stores nothing is found").
func TestReadTasksWithoutSessionStores(t *testing.T) {
	dir, _ := storeFixture(t)
	os.RemoveAll(filepath.Join(dir, "agents"))
	tasks, errs := ReadTasks(dir)
	if len(errs) > 0 || tasks == nil || tasks.Sessions != nil {
		t.Fatalf("tasks %+v, errs %v", tasks, errs)
	}
	for _, r := range tasks.Ledger(ledger.Owner{Name: OwnerName}, taskSnapshot()).Runs {
		if r.Session != "" {
			t.Errorf("%s: session %q without a session store", r.ID, r.Session)
		}
	}
}

// threadID is a version-7 UUID created at t, as codex makes them.
func threadID(t time.Time, n int) string {
	h := fmt.Sprintf("%012x", t.UnixMilli())
	return fmt.Sprintf("%s-%s-7%03x-8000-%012x", h[:8], h[8:], n, n)
}

// codexFixture is the store and table of one gateway (pid 50) running one
// app-server (pid 900, its native codex 901) with MCP servers started for
// six threads: four alone (one of them still bound to a session), two at
// the same moment (both bound, so neither can be told apart), one long
// before any thread record, and a command that is no configured server.
type codexFixture struct {
	dir     string
	threads []string
	snap    *platform.Snapshot
	servers []MCPServer
}

func newCodexFixture(t *testing.T) *codexFixture {
	t.Helper()
	const uptime = 1000 * time.Second
	taken := taskEpoch.Add(30 * time.Second)
	ticks := func(at time.Time) uint64 { return uint64(at.Sub(taken.Add(-uptime)) / (10 * time.Millisecond)) }
	at := []time.Time{taskEpoch.Add(-40 * time.Second), taskEpoch.Add(-30 * time.Second), taskEpoch.Add(-20 * time.Second),
		taskEpoch.Add(-10 * time.Second), taskEpoch.Add(-5 * time.Second), taskEpoch.Add(-4500 * time.Millisecond)}
	fx := &codexFixture{dir: t.TempDir(), servers: []MCPServer{{Server: scan.Server{Name: "docs", Command: "node", Args: []string{"/srv/mcp.mjs"}}}}}
	for i, a := range at {
		fx.threads = append(fx.threads, threadID(a, i))
	}
	me := uint32(os.Getuid()) // the owner of the fixture's state dir
	proc := func(pid, ppid int, start time.Time, argv ...string) platform.Process {
		return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: 900, State: 'S', StartTicks: ticks(start), UID: me}.
			WithDetails(argv, nil, platform.Cgroup{})
	}
	mcp := func(pid int, start time.Time) platform.Process {
		return proc(pid, 901, start, "/usr/bin/node", "/srv/mcp.mjs")
	}
	ms := 30 * time.Millisecond
	fx.snap = platform.NewSnapshot([]platform.Process{
		proc(1, 0, taskEpoch.Add(-uptime), "/sbin/init"),
		proc(50, 1, taskEpoch.Add(-time.Hour), "openclaw-gateway"),
		proc(900, 50, taskEpoch.Add(-time.Minute), "node", "codex.js", "app-server", "--listen", "stdio://"),
		proc(901, 900, taskEpoch.Add(-time.Minute), "codex", "app-server", "--listen", "stdio://"),
		mcp(911, at[0].Add(ms)), mcp(912, at[1].Add(ms)), mcp(913, at[2].Add(ms)), mcp(914, at[3].Add(ms)),
		mcp(915, at[4].Add(200*time.Millisecond)), mcp(916, at[5].Add(ms)), // both fit both threads
		mcp(917, taskEpoch.Add(-50*time.Second)), // before any thread record
		proc(918, 901, at[0].Add(ms), "/bin/bash", "-c", "ls"),
		proc(919, 911, at[0].Add(ms), "/usr/bin/node", "/srv/mcp.mjs"), // a server's own child: not the app-server's
		// Another user's process shaped like an app-server, and a server
		// under it: a registry row naming it proves nothing.
		func() platform.Process {
			q := proc(950, 50, taskEpoch.Add(-time.Minute), "node", "codex.js")
			q.UID = me + 1
			return q
		}(),
		proc(951, 950, taskEpoch.Add(-time.Minute), "codex"),
		proc(952, 951, at[0].Add(ms), "/usr/bin/node", "/srv/mcp.mjs"),
	}, "boot", uptime, taken)

	db := openWAL(t, filepath.Join(fx.dir, "state", "openclaw.sqlite"), pluginStateSchema)
	put := func(ns, key string, v any) {
		b, _ := json.Marshal(v)
		insert(t, db, `INSERT INTO plugin_state_entries VALUES ('codex', ?, ?, ?, 0, NULL)`, ns, key, string(b))
	}
	reg := func(pid int, start string) map[string]any {
		return map[string]any{"parent": map[string]any{"pid": 50, "pgid": 50, "startedAt": fx.snap.Identity(fx.snap.Get(50))},
			"child": map[string]any{"pid": pid, "pgid": pid, "startedAt": start}}
	}
	put("app-server-processes", "live", reg(900, fx.snap.Identity(fx.snap.Get(900))))
	put("app-server-processes", "reused", reg(911, "boot:1")) // a pid that is another process now
	put("app-server-processes", "other-user", reg(950, fx.snap.Identity(fx.snap.Get(950))))
	put("app-server-processes", "twice", reg(900, fx.snap.Identity(fx.snap.Get(900)))) // the same app-server again
	for _, id := range fx.threads {
		put("app-server-managed-threads", "sha256:"+id, map[string]any{"version": 1, "kind": "managed-thread", "threadId": id})
	}
	for _, i := range []int{3, 4, 5} {
		put("app-server-thread-bindings", fmt.Sprintf("session-key:main:%d", i), map[string]any{"version": 1, "state": "active",
			"binding": map[string]any{"threadId": fx.threads[i]}})
	}
	insert(t, db, `INSERT INTO plugin_state_entries VALUES ('codex', 'app-server-thread-bindings', 'bad', '{"binding": [', 0, NULL)`)
	return fx
}

const openclawConfig = `// ~/.openclaw/openclaw.json, as a person edits it
{
  gateway: { port: 18789, },
  mcp: {
    servers: {
      // bundle-MCP stdio servers
      context7: { command: 'npx', args: ['-y', '@upstash/context7-mcp'] },
      docs: { command: '/opt/tools/docs-helper', args: ['--stdio', '/srv/docs'], env: { TOKEN: 'x' } },
      remote: { url: 'https://mcp.example.test/mcp' },   // HTTP: no process
      node: { command: 'node' },
    },
  },
}
`
