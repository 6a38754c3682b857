package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/ledger"
)

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

var (
	bootTime = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	boot     = Boot{ID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", Time: bootTime}
	lockTime = bootTime.Add(2 * time.Hour)
)

func leaseJSON(id string, pid int, state string, started time.Time) map[string]any {
	return map[string]any{"leaseId": id, "gatewayInstanceId": "gw-1", "sessionKey": "agent:codex:acp:" + id,
		"wrapperRoot": "/h/.openclaw/acpx", "wrapperPath": "/h/.openclaw/acpx/codex-acp-wrapper.mjs",
		"rootPid": pid, "commandHash": "abc", "startedAt": started.UnixMilli(), "state": state}
}

// genB writes a Gen B state dir: a gateway lock, the instance id and the
// JSON lease file.
func genB(t *testing.T) string {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "gateway.1a2b3c4d.lock"), map[string]any{
		"pid": 4242, "createdAt": lockTime.Format(time.RFC3339Nano), "configPath": dir + "/openclaw.json", "startTime": 720000})
	if err := os.WriteFile(filepath.Join(dir, "gateway-instance-id"), []byte("gw-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "acpx", "process-leases.json"), map[string]any{"version": 1, "leases": []any{
		leaseJSON("lease-new", 5001, "open", lockTime.Add(time.Minute)),
		leaseJSON("lease-done", 5002, "closed", lockTime.Add(2*time.Minute)),
		leaseJSON("lease-old", 5003, "open", lockTime.Add(-time.Hour)),
	}})
	return dir
}

func TestReadOpenClawGenB(t *testing.T) {
	dir := genB(t)
	if !IsStateDir(dir) {
		t.Fatal("not recognised as a state dir")
	}
	ls, errs := Read(dir, boot)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(ls) != 2 {
		t.Fatalf("%d ledgers, want the current generation's and the previous one's", len(ls))
	}
	cur, prev := ls[0], ls[1]
	wantOwner := ledger.Owner{Name: OwnerName, PID: 4242, Start: boot.ID + ":720000", Instance: "gw-1"}
	if cur.Owner != wantOwner {
		t.Errorf("owner %+v, want %+v", cur.Owner, wantOwner)
	}
	if len(cur.Runs) != 2 || cur.Runs[0].ID != "lease-new" || cur.Runs[0].State != ledger.RunRunning ||
		cur.Runs[1].ID != "lease-done" || cur.Runs[1].State != ledger.RunDone {
		t.Errorf("current runs %+v", cur.Runs)
	}
	r := cur.Runs[0]
	if r.Kind != "acp" || r.PID != 5001 || r.Session != "agent:codex:acp:lease-new" ||
		r.ArgvProof != [2]string{"--openclaw-acpx-lease-id", "lease-new"} || r.Start != "" || !r.Verifiable() {
		t.Errorf("run %+v", r)
	}
	if prev.Owner.Gone == "" || len(prev.Runs) != 1 || prev.Runs[0].ID != "lease-old" {
		t.Errorf("previous generation %+v", prev)
	}
}

func TestReadOpenClawBadFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "acpx"), 0o755)
	os.WriteFile(filepath.Join(dir, "acpx", "process-leases.json"), []byte("{\n  \"version\": 1,\n  \"leases\": [\n    {\"leaseId\": 5}\n  ]\n}"), 0o600)
	os.WriteFile(filepath.Join(dir, "gateway.x.lock"), []byte("garbage"), 0o600)
	ls, errs := Read(dir, boot)
	if len(ls) != 0 || len(errs) != 2 {
		t.Fatalf("ledgers %v errs %v", ls, errs)
	}
	joined := errs[0].Error() + "\n" + errs[1].Error()
	for _, want := range []string{"gateway.x.lock: not a gateway lock", "process-leases.json:4: not a lease file"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
	os.WriteFile(filepath.Join(dir, "acpx", "process-leases.json"), []byte(`{"version": 2, "leases": []}`), 0o600)
	_, errs = Read(dir, boot)
	if len(errs) != 2 || !strings.Contains(errs[1].Error(), "version 2") {
		t.Errorf("errs %v", errs)
	}
	os.WriteFile(filepath.Join(dir, "acpx", "process-leases.json"), []byte(`{"version": 1, "leases": [{"leaseId": "a", "rootPid": 1, "state": "weird"}]}`), 0o600)
	_, errs = Read(dir, boot)
	if len(errs) != 2 || !strings.Contains(errs[1].Error(), `state "weird"`) {
		t.Errorf("errs %v", errs)
	}
}

// genC creates a Gen C state database in WAL mode and returns the writer's
// connection, kept open by the test as a gateway keeps it.
func genC(t *testing.T, dir string) *sql.DB {
	t.Helper()
	path := filepath.Join(dir, "state", "openclaw.sqlite")
	os.MkdirAll(filepath.Dir(path), 0o755)
	db, err := sql.Open("sqlite", sqlitetest.URI(path, "_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE plugin_state_entries (plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, entry_key TEXT NOT NULL,
		value_json TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER, PRIMARY KEY (plugin_id, namespace, entry_key))`)
	put := func(plugin, ns, key string, v any) {
		b, _ := json.Marshal(v)
		exec(`INSERT INTO plugin_state_entries VALUES (?, ?, ?, ?, ?, NULL)`, plugin, ns, key, string(b), time.Now().UnixMilli())
	}
	put("acpx", "process-leases", "lease-sql", leaseJSON("lease-sql", 6001, "open", lockTime.Add(time.Minute)))
	put("acpx", "gateway-instance", "current", map[string]any{"instanceId": "gw-1"})
	put("codex", "app-server-processes", "thread-1", map[string]any{
		"parent": map[string]any{"pid": 4242, "pgid": 4242, "startedAt": boot.ID + ":720000"},
		"child":  map[string]any{"pid": 6100, "pgid": 6100, "startedAt": boot.ID + ":730000", "commandFingerprint": "f"}})
	put("other", "x", "y", map[string]any{})
	return db
}

func TestReadOpenClawGenCWhileOpen(t *testing.T) {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "state", "gateway.state.lock"), map[string]any{
		"pid": 4242, "createdAt": lockTime.Format(time.RFC3339), "startTime": 720000, "role": "gateway", "stateDir": dir})
	db := genC(t, dir)
	// The rows live only in the WAL: the writer is open and never checkpointed.
	if fi, err := os.Stat(filepath.Join(dir, "state", "openclaw.sqlite-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL content: %v", err)
	}
	// A write transaction in progress, as a busy gateway has: the reader must
	// neither block on it nor see it.
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO plugin_state_entries VALUES ('acpx', 'process-leases', 'uncommitted', '{}', 0, NULL)`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ls, errs := Read(dir, boot)
	if took := time.Since(start); took > time.Second {
		t.Errorf("read took %v: it waited on the writer", took)
	}
	conn.ExecContext(ctx, "ROLLBACK")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(ls) != 2 {
		t.Fatalf("%d ledgers: %+v", len(ls), ls)
	}
	leases, codex := ls[0], ls[1]
	if leases.Owner.PID != 4242 || len(leases.Runs) != 1 || leases.Runs[0].ID != "lease-sql" || leases.Runs[0].PID != 6001 {
		t.Errorf("leases %+v", leases)
	}
	want := ledger.Run{ID: "thread-1", Kind: "acp", PID: 6100, PGID: 6100, Start: boot.ID + ":730000", State: ledger.RunRunning, Command: "codex app-server"}
	if codex.Owner.PID != 4242 || codex.Owner.Start != boot.ID+":720000" || len(codex.Runs) != 1 || !reflect.DeepEqual(codex.Runs[0], want) {
		t.Errorf("codex %+v", codex)
	}
}

func TestReadOpenClawSQLiteProblems(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "state"), 0o755)
		os.WriteFile(filepath.Join(dir, "state", "openclaw.sqlite"), []byte("this is not sqlite at all, not even close"), 0o600)
		_, errs := Read(dir, boot)
		var le *ledger.Error
		if len(errs) != 1 || !errors.As(errs[0], &le) {
			t.Errorf("errs %v", errs)
		}
	})
	t.Run("a database without plugin state", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state", "openclaw.sqlite")
		os.MkdirAll(filepath.Dir(path), 0o755)
		db, _ := sql.Open("sqlite", sqlitetest.URI(path, ""))
		db.Exec("CREATE TABLE other (x)")
		db.Close()
		ls, errs := Read(dir, boot)
		if len(ls) != 0 || len(errs) != 0 {
			t.Errorf("ledgers %v errs %v", ls, errs)
		}
	})
	t.Run("a row that does not parse", func(t *testing.T) {
		dir := t.TempDir()
		db := genC(t, dir)
		db.Exec(`INSERT INTO plugin_state_entries VALUES ('codex', 'app-server-processes', 'bad', '{"parent": 5}', 0, NULL)`)
		ls, errs := Read(dir, boot)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "codex/app-server-processes/bad") || len(ls) != 2 {
			t.Errorf("ledgers %d errs %v", len(ls), errs)
		}
	})
}

func FuzzOpenClawFiles(f *testing.F) {
	f.Add([]byte(`{"version":1,"leases":[{"leaseId":"a","rootPid":5,"state":"open","startedAt":1}]}`))
	f.Add([]byte(`{"parent":{"pid":1,"startedAt":"b:1"},"child":{"pid":2,"startedAt":"b:2"}}`))
	f.Add([]byte(`{"pid":4,"createdAt":"2026-01-01T00:00:00Z","startTime":9}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if leases, err := parseLeaseFile("f", b); err == nil {
			for i := range leases {
				if r, err := leases[i].run(); err == nil && (r.ID == "" || r.PID < 0 || !r.Verifiable()) {
					t.Fatalf("accepted run %+v", r)
				}
			}
		}
		var c codexProcess
		if json.Unmarshal(b, &c) == nil {
			c.Key = "k"
			if l, err := c.ledger("f"); err == nil && (l.Owner.PID <= 0 || l.Runs[0].PID <= 0) {
				t.Fatalf("accepted %+v", l)
			}
		}
		var g gatewayLock
		if json.Unmarshal(b, &g) == nil {
			l := Lock{PID: g.PID, CreatedAt: g.CreatedAt, StartTime: g.StartTime}
			l.owner(boot, "")
		}
	})
}
