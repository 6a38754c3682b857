package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// taskEpoch is "now" in these fixtures: rows are written at it, processes
// start 0.4 s before their row.
var taskEpoch = time.Unix(1_795_000_000, 0)

// openWAL and insert write a WAL-mode database as the gateway holds it.
var openWAL, insert = sqlitetest.OpenWAL, sqlitetest.Insert

// The columns reaper reads, as 2026.9.6 declares them (the real tables
// have more).
const (
	taskRunsSchema = `CREATE TABLE task_runs (task_id TEXT NOT NULL PRIMARY KEY, runtime TEXT NOT NULL, task_kind TEXT,
		source_id TEXT, requester_session_key TEXT, owner_key TEXT NOT NULL, scope_kind TEXT NOT NULL, task TEXT NOT NULL,
		status TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT`
	sessionNodesSchema = `CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL,
		entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL, archived_at INTEGER) STRICT`
	pluginStateSchema = `CREATE TABLE plugin_state_entries (plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, entry_key TEXT NOT NULL,
		value_json TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER, PRIMARY KEY (plugin_id, namespace, entry_key))`
	archivesSchema = `CREATE TABLE session_transcript_archives (session_id TEXT NOT NULL, generation TEXT NOT NULL,
		session_key TEXT NOT NULL, reason TEXT NOT NULL CHECK (reason IN ('deleted', 'reset')), created_at INTEGER NOT NULL,
		PRIMARY KEY (session_id, generation)) STRICT`
)

// execRow writes an exec row of session key for command, at offset from
// the fixtures' now.
func execRow(t *testing.T, db *sql.DB, slug, key, command, status string, offset time.Duration) {
	insert(t, db, `INSERT INTO task_runs VALUES (?, 'cli', 'exec', ?, ?, ?, 'session', ?, ?, ?)`,
		"id-"+slug, slug, key, key, command, status, taskEpoch.Add(offset).UnixMilli())
}

// storeFixture writes a state dir: exec rows for sessions live, deleted,
// archived and reset (the reset after its row), and a second agent's store.
func storeFixture(t *testing.T) (string, *sql.DB) {
	t.Helper()
	dir := t.TempDir()
	tasks := openWAL(t, filepath.Join(dir, "state", "openclaw.sqlite"), taskRunsSchema)
	execRow(t, tasks, "one", "agent:main:live", "sleep 600; : one", "running", 0)
	execRow(t, tasks, "two", "agent:main:gone", "sleep 600; : two", "running", 0)
	execRow(t, tasks, "three", "agent:main:reset", "sleep 600; : three", "running", 0)
	execRow(t, tasks, "four", "agent:main:archived", "sleep 600; : four", "running", 0)
	execRow(t, tasks, "five", "agent:work:live", "sleep 600; : five", "succeeded", 0)
	execRow(t, tasks, "six", "agent:main:live", "sleep 600; : twin", "running", 0)
	execRow(t, tasks, "seven", "agent:main:live", "sleep 600; : nobody", "running", 0)
	execRow(t, tasks, "eight", "agent:main:live", "sleep 600; : exited", "failed", 0)
	execRow(t, tasks, "nine", "agent:main:live", "trap '' HUP; sleep 600; : nine", "running", 0)
	execRow(t, tasks, "ten", "agent:main:gone", "sleep 600; : ten", "running", 0)
	execRow(t, tasks, "eleven", "agent:main:live", "sleep 600; : first", "running", 0)
	execRow(t, tasks, "twelve", "agent:main:live", "sleep 600; : late", "running", 0)
	main := openWAL(t, filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), sessionNodesSchema, archivesSchema)
	for _, key := range []string{"agent:main:live", "agent:main:reset"} {
		insert(t, main, `INSERT INTO session_nodes VALUES (?, 'sid', '{}', 0, NULL)`, key)
	}
	insert(t, main, `INSERT INTO session_nodes VALUES ('agent:main:archived', 'sid', '{}', 0, 1)`)
	insert(t, main, `INSERT INTO session_transcript_archives VALUES ('s-gone', 'g1', 'agent:main:gone', 'deleted', ?)`, taskEpoch.Add(time.Minute).UnixMilli())
	insert(t, main, `INSERT INTO session_transcript_archives VALUES ('s-reset', 'g1', 'agent:main:reset', 'reset', ?)`, taskEpoch.Add(time.Minute).UnixMilli())
	work := openWAL(t, filepath.Join(dir, "agents", "work", "agent", "openclaw-agent.sqlite"), sessionNodesSchema, archivesSchema)
	insert(t, work, `INSERT INTO session_nodes VALUES ('agent:work:live', 'sid', '{}', 0, NULL)`)
	return dir, tasks
}

// taskSnapshot is a process table 30 s after the fixtures' now: each exec
// shell started 0.4 s before its row, some with the command they run.
func taskSnapshot() *platform.Snapshot {
	me := uint32(os.Getuid()) // the owner of the fixtures' state dirs
	const uptime = 1000 * time.Second
	taken := taskEpoch.Add(30 * time.Second)
	ticks := func(at time.Time) uint64 { return uint64(at.Sub(taken.Add(-uptime)) / (10 * time.Millisecond)) }
	proc := func(pid, ppid int, at time.Time, argv ...string) platform.Process {
		return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', StartTicks: ticks(at), UID: me}.
			WithDetails(argv, []string{"OPENCLAW_SHELL=exec"}, platform.Cgroup{})
	}
	stranger := func(pid int, text string) platform.Process { // the same command, not OpenClaw's
		return platform.Process{PID: pid, PPID: 1, PGID: pid, SID: pid, State: 'S', StartTicks: ticks(taskEpoch.Add(-300 * time.Millisecond)), UID: me + 1}.
			WithDetails([]string{"/bin/bash", "-c", text}, nil, platform.Cgroup{})
	}
	shell := func(pid int, text string) platform.Process {
		return proc(pid, 50, taskEpoch.Add(-400*time.Millisecond), "/bin/bash", "--noprofile", "--norc", "-c", "if [ -r s ]; then . s; fi\n"+text)
	}
	ptyShell := func(pid int, text string) platform.Process {
		p := shell(pid, text)
		p.TTY = 136<<8 | 3
		return p
	}
	return platform.NewSnapshot([]platform.Process{
		proc(1, 0, taskEpoch.Add(-uptime), "/sbin/init"),
		proc(50, 1, taskEpoch.Add(-time.Hour), "node", "spawn-broker/worker.js"),
		shell(101, "sleep 600; : one"), proc(102, 101, taskEpoch.Add(-390*time.Millisecond), "sleep", "600"),
		shell(201, "sleep 600; : two"),
		shell(301, "sleep 600; : three"),
		shell(401, "sleep 600; : four"),
		shell(501, "sleep 600; : five"),
		shell(601, "sleep 600; : twin"), shell(602, "sleep 600; : twin"),
		// A command with single quotes, as OpenClaw wraps it after sourcing
		// a shell snapshot: eval '<command>', each ' written '\''.
		shell(901, `eval 'trap '\'''\'' HUP; sleep 600; : nine'`),
		// An exec with pty: true: a session leader on /dev/pts/3 (major
		// 136 in bits 8–15 of tty_nr).
		ptyShell(1001, "sleep 600; : ten"),
		// A gateway's first exec: its row's time is the exec's start, and
		// its shell was spawned 6 s later, once the login shell's snapshot
		// was captured. A shell 20 s after its row is not the row's.
		proc(1101, 50, taskEpoch.Add(6*time.Second), "/bin/bash", "-c", "sleep 600; : first"),
		proc(1201, 50, taskEpoch.Add(20*time.Second), "/bin/bash", "-c", "sleep 600; : late"),
		// The same command started an hour earlier: outside the window.
		proc(701, 50, taskEpoch.Add(-time.Hour), "/bin/bash", "-c", "sleep 600; : nobody"),
		// Another user's process with the same command in the window, no
		// OpenClaw marker: neither a match nor an ambiguity.
		stranger(801, "sleep 600; : one"),
		// Another user's process with OpenClaw's marker and the command, in
		// the window: the store is its owner's, and speaks only of their
		// processes — not an ambiguity either.
		platform.Process{PID: 802, PPID: 1, PGID: 802, SID: 802, State: 'S', StartTicks: ticks(taskEpoch.Add(-300 * time.Millisecond)), UID: me + 1}.
			WithDetails([]string{"/bin/bash", "-c", "sleep 600; : one"}, []string{"OPENCLAW_SHELL=exec"}, platform.Cgroup{}),
	}, "boot", uptime, taken)
}

// The gateway holds its task store open in WAL mode, mid-write: the
// reader neither waits on it nor sees the uncommitted row.
func TestReadTasksWhileWriting(t *testing.T) {
	dir, tasks := storeFixture(t)
	ctx := context.Background()
	conn, err := tasks.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO task_runs VALUES ('x', 'cli', 'exec', 'uncommitted', 'k', 'k', 'session', 'true', 'running', 0)`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, errs := ReadTasks(dir)
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v: it waited on the writer", took)
	}
	conn.ExecContext(ctx, "ROLLBACK")
	if len(errs) > 0 || got == nil || len(got.Execs) != 12 {
		t.Fatalf("rows %+v, errs %v", got, errs)
	}
}

// A session store that exists and can't be read leaves every session
// unknown, and says so.
func TestReadTasksBadSessionStore(t *testing.T) {
	dir, _ := storeFixture(t)
	bad := filepath.Join(dir, "agents", "broken", "agent", "openclaw-agent.sqlite")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("not a database, garbage"), 0o644)
	tasks, errs := ReadTasks(dir)
	if tasks == nil || tasks.Sessions != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "openclaw-agent.sqlite") {
		t.Fatalf("tasks %+v errs %v: want no session state and the store named", tasks, errs)
	}
	if strings.Contains(errs[0].Error(), "garbage") {
		t.Errorf("the error quotes the file: %v", errs[0])
	}
}

// Exec rows hold whatever a model ran: any command text, session key and
// status must give a ledger whose tied runs carry a start identity and
// whose others say why they have no pid.
func FuzzExecLedger(f *testing.F) {
	f.Add("sleep 600; : one", "agent:main:live", "running", int64(0))
	f.Add("", "", "", int64(-1))
	f.Add("sleep 600; : twin", "agent:main:gone", "failed", int64(500))
	f.Fuzz(func(t *testing.T, command, key, status string, offsetMs int64) {
		tasks := &Tasks{Source: "fuzz", owner: os.Getuid(), Execs: []ExecTask{{Slug: "f", SessionKey: key, Command: command, Status: status,
			Created: taskEpoch.Add(time.Duration(offsetMs) * time.Millisecond)}},
			Sessions: &Sessions{Live: map[string]bool{"agent:main:live": true}, Deleted: map[string]bool{"agent:main:gone": true}, Reset: map[string]time.Time{}}}
		s := taskSnapshot()
		for _, r := range tasks.Ledger(ledger.Owner{Name: OwnerName}, s).Runs {
			switch {
			case r.PID > 0 && (r.Start == "" || r.Proof == ""):
				t.Fatalf("tied run without identity or proof: %+v", r)
			case r.PID <= 0 && r.Note == "":
				t.Fatalf("untied run without a note: %+v", r)
			}
		}
	})
}

// A user's state dir is theirs to fill: more lock files or agent stores
// than a gateway keeps are refused with an error naming the dir, not read
// one by one. The controls are the fixtures above, read in full.
func TestStateDirBounds(t *testing.T) {
	dir, _ := storeFixture(t)
	for i := 0; i <= maxAgents; i++ {
		p := filepath.Join(dir, "agents", fmt.Sprintf("a%d", i), "agent", "openclaw-agent.sqlite")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	tasks, errs := ReadTasks(dir)
	if tasks == nil || tasks.Sessions != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "agent session stores: more than") {
		t.Errorf("tasks %v, errs %v: want no session state and the bound named", tasks, errs)
	}
	locks := t.TempDir()
	for i := 0; i <= maxLocks; i++ {
		os.WriteFile(filepath.Join(locks, fmt.Sprintf("gateway.%08x.lock", i)), []byte(`{"pid": 1}`), 0o600)
	}
	sd, err := statedir.Open(locks)
	if err != nil {
		t.Fatal(err)
	}
	raw := &Raw{}
	if got := raw.readLocks(sd); got != nil || len(raw.Problems) != 1 || !strings.Contains(raw.Problems[0].Msg, "gateway lock files: more than") {
		t.Errorf("lock %v, problems %v: want none read and the bound named", got, raw.Problems)
	}
}

// Exec rows cross from a reader child to its parent as JSON and decode into
// a slice of their exact length, whatever their text holds.
func TestExecRowsJSON(t *testing.T) {
	at := time.UnixMilli(1_763_954_000_000).UTC()
	rows := ExecRows{
		{TaskID: "a", Command: `echo "a, [b]" \ {c}`, Status: "running", Created: at},
		{TaskID: "b", Slug: "x,y", Command: `'],["`, Status: "succeeded", Created: at},
		{TaskID: "c", Command: "\\\"", Status: "failed", Created: at},
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	var got ExecRows
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) || cap(got) != len(rows) {
		t.Errorf("got %+v (cap %d), want %+v", got, cap(got), rows)
	}
	for doc, n := range map[string]int{`[]`: 0, ` [ ] `: 0, `[{}]`: 1, `[{},{"a":[1,2]}]`: 2, `null`: 0, `[1,2,3]`: 3} {
		if got := countElements([]byte(doc)); got != n {
			t.Errorf("countElements(%s) = %d, want %d", doc, got, n)
		}
	}
}

// FuzzExecRows: whatever bytes a reader child prints, ExecRows decodes as
// encoding/json does into a plain slice, and never with less room than it
// needs (the element count only sizes the slice).
func FuzzExecRows(f *testing.F) {
	f.Add([]byte(`[{"id":"a","cmd":"x, [y]","status":"running","at":"2026-11-24T00:00:00Z"}]`))
	f.Add([]byte(`[{},{"cmd":"\"],["}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var plain []ExecTask
		errPlain := json.Unmarshal(b, &plain)
		var rows ExecRows
		errRows := json.Unmarshal(b, &rows)
		if (errPlain == nil) != (errRows == nil) {
			t.Fatalf("plain error %v, ExecRows error %v", errPlain, errRows)
		}
		if errPlain == nil && !reflect.DeepEqual([]ExecTask(rows), plain) && !(len(rows) == 0 && len(plain) == 0) {
			t.Fatalf("ExecRows %+v, plain %+v", rows, plain)
		}
	})
}
