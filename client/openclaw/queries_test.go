package openclaw

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/sqlitestore"
	"github.com/orphanreaper/reaper/platform"
)

// The stores are read by reaper's own reader, each query it once ran as
// SQL now Go code over the table's rows. These tests hold each to the
// query it replaced: the same random store is read both ways — SQLite
// running the query, and reaper's reader — past every LIMIT, so the
// order and the bound are what is compared, not only the rows.

// readWithReader opens dir's store with reaper's reader and runs read in it.
func readWithReader(t *testing.T, dir, rel string, read func(db *sqlitestore.DB) error) {
	t.Helper()
	if err := sqlitestore.Query(dir, rel, platform.AnyOwner, read); err != nil {
		t.Fatal(err)
	}
}

func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghij-ßé"
	var b strings.Builder
	for range n {
		b.WriteString(string([]rune(letters)[r.IntN(len([]rune(letters)))]))
	}
	return b.String()
}

// TestPluginRowsAsTheQuery: more matching rows than maxPluginRows, keys
// and values longer than their cuts, rows of other plugins and
// namespaces, and text look-alikes stored as blobs.
func TestPluginRowsAsTheQuery(t *testing.T) {
	dir := t.TempDir()
	db := openWAL(t, filepath.Join(dir, "state.sqlite"), pluginStateSchema)
	r := rand.New(rand.NewPCG(7, 8))
	plugins := [][2]string{{"acpx", "process-leases"}, {"codex", "app-server-processes"}, {"codex", "app-server-thread-bindings"},
		{"codex", "app-server-managed-threads"}, {"codex", "other"}, {"acpx", "app-server-processes"}, {"other", "process-leases"}}
	tx, _ := db.Begin()
	for i := range 2 * maxPluginRows {
		p := plugins[r.IntN(len(plugins))]
		key := fmt.Sprintf("%05d-%s", r.IntN(1_000_000), randomText(r, r.IntN(300)))
		value := randomText(r, 10)
		if i%500 == 0 {
			value = strings.Repeat("v", 70_000)
		}
		var plugin any = p[0]
		if i%97 == 0 {
			plugin = []byte(p[0]) // a blob is not the text 'acpx'
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO plugin_state_entries VALUES (?, ?, ?, ?, 0, NULL)`, plugin, p[1], key, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT plugin_id, namespace, substr(entry_key, 1, 256), substr(value_json, 1, 65536) FROM plugin_state_entries
		WHERE (plugin_id = 'acpx' AND namespace = 'process-leases')
		   OR (plugin_id = 'codex' AND namespace IN ('app-server-processes', 'app-server-thread-bindings', 'app-server-managed-threads'))
		ORDER BY plugin_id, namespace, entry_key LIMIT ?`, maxPluginRows)
	if err != nil {
		t.Fatal(err)
	}
	var want []pluginRow
	for rows.Next() {
		var p pluginRow
		if err := rows.Scan(&p.plugin, &p.namespace, &p.key, &p.value); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	rows.Close()
	var got []pluginRow
	readWithReader(t, dir, "state.sqlite", func(db *sqlitestore.DB) error {
		got, err = pluginRows(db)
		return err
	})
	if len(want) != maxPluginRows {
		t.Fatalf("SQLite read %d rows: the store does not pass the LIMIT", len(want))
	}
	for i := range want {
		got[i].rowid = 0
		if got[i] != want[i] {
			t.Fatalf("row %d: %.80v, SQLite reads %.80v", i, got[i], want[i])
		}
	}
}

// TestExecRowsAsTheQuery: more exec rows than maxTaskRows, other kinds
// between them, commands longer than maxCommand, NULL sources.
func TestExecRowsAsTheQuery(t *testing.T) {
	dir := t.TempDir()
	db := openWAL(t, filepath.Join(dir, "state.sqlite"), taskRunsSchema)
	r := rand.New(rand.NewPCG(9, 10))
	tx, _ := db.Begin()
	for i, at := range r.Perm(maxTaskRows + 4000) {
		kind := "exec"
		if i%5 == 0 {
			kind = "agent"
		}
		var source any = fmt.Sprint("s", i)
		if i%7 == 0 {
			source = nil
		}
		command := randomText(r, 10)
		if i%1000 == 0 {
			command = strings.Repeat("c", maxCommand+50)
		}
		if _, err := tx.Exec(`INSERT INTO task_runs VALUES (?, 'cli', ?, ?, ?, 'o', 'session', ?, 'running', ?)`,
			fmt.Sprint("id-", i), kind, source, "agent:main:"+randomText(r, 5), command, 1_795_000_000_000+int64(at)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT substr(task_id, 1, 128), substr(coalesce(source_id, ''), 1, 128),
		substr(coalesce(requester_session_key, ''), 1, 512), substr(task, 1, ?), substr(status, 1, 32), created_at
		FROM task_runs WHERE task_kind = 'exec' ORDER BY created_at DESC LIMIT ?`, maxCommand, maxTaskRows)
	if err != nil {
		t.Fatal(err)
	}
	var want []ExecTask
	for rows.Next() {
		var e ExecTask
		var created int64
		if err := rows.Scan(&e.TaskID, &e.Slug, &e.SessionKey, &e.Command, &e.Status, &created); err != nil {
			t.Fatal(err)
		}
		e.Created = time.UnixMilli(created)
		want = append(want, e)
	}
	rows.Close()
	got := &Tasks{}
	readWithReader(t, dir, "state.sqlite", func(db *sqlitestore.DB) error { got.Execs = nil; return got.readExecs(db) })
	if len(want) != maxTaskRows || len(got.Execs) != len(want) {
		t.Fatalf("%d rows, SQLite reads %d", len(got.Execs), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got.Execs[i], want[i]) {
			t.Fatalf("row %d: %+.80v, SQLite reads %+.80v", i, got.Execs[i], want[i])
		}
	}
}

// TestSessionStoreAsTheQueries: more session rows than maxTaskRows, and
// more (session_key, reason) groups of archives than twice it, so the
// groups are pruned during the read.
func TestSessionStoreAsTheQueries(t *testing.T) {
	dir := t.TempDir()
	db := openWAL(t, filepath.Join(dir, "agent.sqlite"), sessionNodesSchema, archivesSchema)
	r := rand.New(rand.NewPCG(11, 12))
	tx, _ := db.Begin()
	for i := range maxTaskRows + 2000 {
		var archived any
		if i%3 == 0 {
			archived = int64(i)
		}
		if _, err := tx.Exec(`INSERT INTO session_nodes VALUES (?, 's', '{}', 0, ?)`, fmt.Sprintf("agent:main:%06d", r.IntN(1_000_000))+fmt.Sprint(i), archived); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3*maxTaskRows + 5000 {
		reason := []string{"deleted", "reset"}[r.IntN(2)]
		if _, err := tx.Exec(`INSERT INTO session_transcript_archives VALUES (?, 'g', ?, ?, ?)`,
			fmt.Sprint("s", i), fmt.Sprintf("agent:main:%05d", r.IntN(25_000)), reason, 1_795_000_000_000+r.Int64N(1_000_000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := &Sessions{Live: map[string]bool{}, Deleted: map[string]bool{}, Reset: map[string]time.Time{}}
	nodes, err := db.Query(`SELECT substr(session_key, 1, 512), archived_at IS NOT NULL FROM session_nodes LIMIT ?`, maxTaskRows)
	if err != nil {
		t.Fatal(err)
	}
	scanAll(t, nodes, func(s func(...any) error) {
		var key string
		var archived bool
		if err := s(&key, &archived); err != nil {
			t.Fatal(err)
		}
		if archived {
			want.Deleted[key] = true
		} else {
			want.Live[key] = true
		}
	})
	groups, err := db.Query(`SELECT substr(session_key, 1, 512), substr(reason, 1, 32), max(created_at) FROM session_transcript_archives
		GROUP BY session_key, reason LIMIT ?`, maxTaskRows)
	if err != nil {
		t.Fatal(err)
	}
	scanAll(t, groups, func(s func(...any) error) {
		var key, reason string
		var at int64
		if err := s(&key, &reason, &at); err != nil {
			t.Fatal(err)
		}
		switch reason {
		case "deleted":
			want.Deleted[key] = true
		case "reset":
			if at := time.UnixMilli(at); at.After(want.Reset[key]) {
				want.Reset[key] = at
			}
		}
	})
	got := &Sessions{}
	readWithReader(t, dir, "agent.sqlite", func(db *sqlitestore.DB) error {
		got = &Sessions{Live: map[string]bool{}, Deleted: map[string]bool{}, Reset: map[string]time.Time{}}
		return readSessionStore(db, got)
	})
	if len(want.Reset) < 1000 || len(want.Live)+len(want.Deleted) < maxTaskRows {
		t.Fatalf("SQLite read %d live, %d deleted, %d reset: the store does not pass the LIMITs", len(want.Live), len(want.Deleted), len(want.Reset))
	}
	if !reflect.DeepEqual(got.Live, want.Live) || !reflect.DeepEqual(got.Deleted, want.Deleted) || !reflect.DeepEqual(got.Reset, want.Reset) {
		t.Errorf("live %d/%d, deleted %d/%d, reset %d/%d (reaper/SQLite)", len(got.Live), len(want.Live), len(got.Deleted), len(want.Deleted), len(got.Reset), len(want.Reset))
	}
}

// scanAll calls each with every row's Scan.
func scanAll(t *testing.T, rows *sql.Rows, each func(scan func(...any) error)) {
	t.Helper()
	defer rows.Close()
	for rows.Next() {
		each(rows.Scan)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
