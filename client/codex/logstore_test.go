package codex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/orphanreaper/reaper/client/sqlitestore"
	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/platform"
)

// TestLogThreadsAsTheQuery: the log store is read by reaper's own reader,
// the query it once ran as SQL now Go code over the logs rows. The same
// random store is read both ways — SQLite running the query, and
// logThreads — with more threads than maxLogThreads, rows of no thread,
// process uuids of every case and of no pid, shutdown lines in any case
// and under other targets: the same processes, loaded threads and times.
func TestLogThreadsAsTheQuery(t *testing.T) {
	dir := t.TempDir()
	db := sqlitetest.OpenWAL(t, filepath.Join(dir, logStore), logsSchema)
	r := rand.New(rand.NewPCG(13, 14))
	uuids := []string{"other", "pid:x:1"}
	for i := range 40 {
		p := "pid"
		if i%9 == 0 {
			p = "PID" // LIKE 'pid:%' takes it; the pattern does not
		}
		uuids = append(uuids, fmt.Sprintf("%s:%d:0a1b2c3d-0000-4000-8000-%012d", p, 100+i, i))
	}
	tx, _ := db.Begin()
	for i := range 3 * maxLogThreads * 4 {
		var thread any = fmt.Sprintf("t%d", r.IntN(3*maxLogThreads))
		if i%11 == 0 {
			thread = nil
		}
		target, body := "codex_app_server::request", "thread/start"
		switch r.IntN(40) {
		case 0:
			target, body = "codex_core::session::handlers", "submission: Shutting down Codex instance"
		case 1:
			target, body = "codex_core::session::handlers", "submission: SHUTTING DOWN codex INSTANCE"
		case 2:
			body = "Shutting down Codex instance" // another target: not an end
		}
		if _, err := tx.Exec(`INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, thread_id, process_uuid) VALUES (?, 0, 'INFO', ?, ?, ?, ?)`,
			1_795_000_000+r.Int64N(10_000_000), target, body, thread, uuids[r.IntN(len(uuids))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	rows, err := db.Query(`SELECT process_uuid, thread_id, min(ts),
		max(target = 'codex_core::session::handlers' AND feedback_log_body LIKE '%Shutting down Codex instance%')
		FROM logs WHERE thread_id IS NOT NULL AND process_uuid LIKE 'pid:%'
		GROUP BY process_uuid, thread_id ORDER BY min(ts) DESC LIMIT ?`, maxLogThreads)
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(`^pid:([1-9][0-9]{0,9}):([0-9a-fA-F-]{1,64})$`)
	var want []AppServerLog
	byUUID := map[string]int{}
	n := 0
	for rows.Next() {
		var pu, thread string
		var ts int64
		var ended bool
		if err := rows.Scan(&pu, &thread, &ts, &ended); err != nil {
			t.Fatal(err)
		}
		n++
		m := pattern.FindStringSubmatch(pu)
		if m == nil {
			continue
		}
		k, ok := byUUID[pu]
		if !ok {
			pid, _ := strconv.Atoi(m[1])
			k, byUUID[pu] = len(want), len(want)
			want = append(want, AppServerLog{PID: pid, UUID: m[2], First: ts * 1000})
		}
		want[k].First = min(want[k].First, ts*1000)
		if !ended {
			want[k].Loaded = append(want[k].Loaded, thread)
		}
	}
	rows.Close()
	loaded := 0
	for _, l := range want {
		loaded += len(l.Loaded)
	}
	if n != maxLogThreads || loaded == 0 || loaded > n*9/10 {
		t.Fatalf("SQLite read %d threads, %d loaded: the store does not pass the LIMIT, or none ended", n, loaded)
	}
	var got []AppServerLog
	if err := sqlitestore.Query(dir, logStore, platform.AnyOwner, func(db *sqlitestore.DB) error {
		got, err = logThreads(db)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]AppServerLog{want, got} {
		for i := range l {
			sort.Strings(l[i].Loaded)
		}
		sort.Slice(l, func(i, j int) bool { return l[i].UUID < l[j].UUID })
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%d processes, SQLite's query %d:\n%.300v\nSQLite's\n%.300v", len(got), len(want), got, want)
	}
}
