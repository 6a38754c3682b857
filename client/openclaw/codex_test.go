package openclaw

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

const pluginStateSchema = `CREATE TABLE plugin_state_entries (plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, entry_key TEXT NOT NULL,
	value_json TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER, PRIMARY KEY (plugin_id, namespace, entry_key))`

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

func TestUUIDv7Time(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want int64
	}{
		{"01a2048b-d273-7c41-864c-1c9d90fbcfa0", 0x01a2048bd273}, // a thread of the real codex 0.154
		{"01a2048b-d273-4c41-864c-1c9d90fbcfa0", 0},              // v4: no time in it
		{"01a2048b-d273-7c41-864c", 0},
		{"zzzzzzzz-zzzz-7zzz-zzzz-zzzzzzzzzzzz", 0},
		{"", 0},
	} {
		got := uuidV7Time(tt.id)
		if (tt.want == 0) != got.IsZero() || tt.want != 0 && got.UnixMilli() != tt.want {
			t.Errorf("%q: %v, want %d ms", tt.id, got, tt.want)
		}
	}
}

// Codex rows hold whatever the store holds: any values give threads that
// are named, each once, bound only if a binding names them, and rows that
// don't parse are counted.
func FuzzCodexRows(f *testing.F) {
	f.Add(`{"version":1,"state":"active","binding":{"threadId":"01a2048b-d273-7c41-864c-1c9d90fbcfa0"}}`, `{"threadId":"01a2048b-d273-7c41-864c-1c9d90fbcfa0"}`, `{"parent":{"pid":1},"child":{"pid":2,"startedAt":"b:1"}}`)
	f.Add(`{"binding": [`, `null`, `{"child":{"pid":-1}}`)
	f.Add(`{"binding":{"threadId":""}}`, `{"threadId":7}`, ``)
	f.Fuzz(func(t *testing.T, binding, managed, registry string) {
		cx := &CodexRows{}
		bad := 0
		for _, row := range [][2]string{{"app-server-managed-threads", managed}, {"app-server-thread-bindings", binding}, {"app-server-processes", registry}} {
			if !cx.add(row[0], row[1]) {
				bad++
			}
		}
		seen := map[string]bool{}
		for _, th := range cx.Threads {
			if th.ID == "" || seen[th.ID] {
				t.Fatalf("thread %q empty or twice: %+v", th.ID, cx.Threads)
			}
			seen[th.ID] = true
		}
		if n := len(cx.Threads) + len(cx.Servers) + bad; n > 3 || len(cx.Servers) > 1 || bad+len(cx.Servers) > 3 {
			t.Fatalf("%d threads, %d servers, %d bad from 3 rows", len(cx.Threads), len(cx.Servers), bad)
		}
		only := &CodexRows{}
		only.add("app-server-managed-threads", managed)
		for _, th := range only.Threads {
			if th.Bound {
				t.Fatalf("thread %q bound with no binding row", th.ID)
			}
		}
		for _, c := range cx.Servers {
			if c.Child.PID <= 0 {
				t.Fatalf("registry row without a child pid kept: %+v", c)
			}
		}
	})
}
