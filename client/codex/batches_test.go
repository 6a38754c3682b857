package codex

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/platform"
)

// logsSchema is logs_2.sqlite's table as Codex 0.169.0 creates it.
const logsSchema = `CREATE TABLE logs (id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL, ts_nanos INTEGER NOT NULL,
	level TEXT NOT NULL, target TEXT NOT NULL, feedback_log_body TEXT, module_path TEXT, file TEXT, line INTEGER,
	thread_id TEXT, process_uuid TEXT, estimated_bytes INTEGER NOT NULL DEFAULT 0)`

// batchHome is a CODEX_HOME whose config declares the stdio server docs,
// and whose log store shows app-server pid 800 (process uuid u-1, rows
// from second at) loading threads t1, t2 and t3 and shutting t3 down.
func batchHome(t *testing.T, at int64) string {
	t.Helper()
	dir := codexHome(t, 0, 0, "")
	db := sqlitetest.OpenWAL(t, filepath.Join(dir, logStore), logsSchema)
	row := func(thread, target, body string) {
		sqlitetest.Insert(t, db, `INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, thread_id, process_uuid) VALUES (?, 0, 'INFO', ?, ?, ?, ?)`,
			at, target, body, thread, "pid:800:0a1b2c3d-0000-4000-8000-000000000001")
	}
	for _, th := range []string{"t1", "t2", "t3"} {
		row(th, "codex_app_server::request", `app_server.request{otel.name="thread/start"}`)
	}
	row("t3", "codex_core::session::handlers", `session_loop{thread_id=t3}:submission_dispatch{otel.name="op.dispatch.shutdown" codex.op="shutdown"}: Shutting down Codex instance`)
	return dir
}

// TestServerBatches: an app-server running more copies of a configured
// server than the threads its log shows loaded is advised about, with the
// numbers and the oldest copies; nothing is a finding. Each control
// breaks one leg: as many copies as threads, copies too young to count, an
// app-server reparented, of another CODEX_HOME or user, or one the log's
// rows predate (its pid reused).
func TestServerBatches(t *testing.T) {
	const uid = 1000
	launcher := clienttest.Proc(790, 500, 790, uid, []string{"node", "codex.js", "app-server"}, nil)
	shell := clienttest.Proc(500, 1, 500, uid, []string{"bash"}, nil)
	server := func(dir string, ppid int, u uint32) platform.Process {
		return clienttest.Proc(800, ppid, 790, u, []string{"/opt/codex/codex", "app-server"}, []string{EnvHome + "=" + dir})
	}
	copies := func(n int, young bool) []platform.Process {
		var out []platform.Process
		for k := 0; k < n; k++ {
			p := clienttest.Proc(810+k, 800, 810+k, uid, []string{"/opt/srv/stubborn", "--quiet"}, nil)
			if young {
				p.StartTicks = uint64(clienttest.Taken.Unix()-1) * 100
			}
			out = append(out, p)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		at    int64
		procs func(dir string) []platform.Process
		want  string
	}{
		{"six copies, two threads", 1000, func(dir string) []platform.Process {
			return append([]platform.Process{shell, launcher, server(dir, 790, uid)}, copies(6, false)...)
		}, "runs 6 copies of MCP server \"stubborn\""},
		{"control: a copy a thread", 1000, func(dir string) []platform.Process {
			return append([]platform.Process{shell, launcher, server(dir, 790, uid)}, copies(2, false)...)
		}, ""},
		{"control: copies under two seconds old", 1000, func(dir string) []platform.Process {
			return append(append([]platform.Process{shell, launcher, server(dir, 790, uid)}, copies(2, false)...), copies(4, true)[2:]...)
		}, ""},
		{"control: the app-server reparented", 1000, func(dir string) []platform.Process {
			return append([]platform.Process{server(dir, 1, uid)}, copies(6, false)...)
		}, ""},
		{"control: another CODEX_HOME's", 1000, func(dir string) []platform.Process {
			return append([]platform.Process{shell, launcher, server(dir+"x", 790, uid)}, copies(6, false)...)
		}, ""},
		{"control: another user's", 1000, func(dir string) []platform.Process {
			return append([]platform.Process{shell, launcher, server(dir, 790, uid+1)}, copies(6, false)...)
		}, ""},
		{"control: rows older than the process", 500, func(dir string) []platform.Process {
			return append([]platform.Process{shell, launcher, server(dir, 790, uid)}, copies(6, false)...)
		}, ""},
	} {
		dir := batchHome(t, tc.at)
		r, got := clienttest.Advise(t, Client, dir, uid, "codex-mcp-batches", tc.procs(dir)...)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: advice %q; want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[0], "for 2 loaded threads") || !strings.Contains(got[0], "pids 810, 811, 812, 813")):
			t.Errorf("%s: advice %q; want one saying %q, 2 loaded threads, the oldest four", tc.name, got, tc.want)
		case tc.want != "":
			t.Logf("%s: %s", tc.name, got[0])
		}
		for _, f := range r.Findings {
			if f.Root.PPID == 800 {
				t.Errorf("%s: a finding under the app-server: %d", tc.name, f.Root.PID)
			}
		}
	}
}

// TestReadRealLogStore reads a log store Codex 0.169.0 wrote here (its
// rows that name a thread kept): app-server pid 16667 started a thread,
// which was unsubscribed and shut down ~60 s later; pid 17393 started one
// and reloaded its servers. The first has no thread loaded, the second one.
func TestReadRealLogStore(t *testing.T) {
	dir := codexHome(t, 0, 0, "")
	b, err := os.ReadFile(filepath.Join("testdata", logStore))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, logStore), b, 0o600)
	raw := Adapter{}.Read(dir)
	loaded := map[int][]string{}
	for _, l := range raw.AppServers {
		loaded[l.PID] = l.Loaded
	}
	if len(raw.AppServers) != 2 || len(loaded[16667]) != 0 || !reflect.DeepEqual(loaded[17393], []string{"01a21865-42ed-7b23-9f07-8d87a4460cd7"}) {
		t.Errorf("app-servers %+v; want 16667 with no thread loaded, 17393 with one (problems %v)", raw.AppServers, raw.ConfigProblems)
	}
}
