package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite: OpenClaw's Gen C state is a WAL-mode database

	"github.com/orphanreaper/reaper/ledger"
)

// sqliteTimeout bounds the whole read of the state database: the gateway
// may hold it, and reaper must not wait on it.
const sqliteTimeout = 2 * time.Second

// readSQLite reads the rows of <state>/state/openclaw.sqlite that
// name processes: ('acpx','process-leases',leaseId) → lease JSON, and
// ('codex','app-server-processes',key) → {parent, child}.
//
// The database is opened read-only (mode=ro, query_only): in WAL mode a
// reader neither blocks the gateway's writes nor is blocked by them, and it
// sees the last committed state, WAL included. A short busy timeout covers
// a gateway that holds it in rollback mode or exclusively; then the read
// fails and the error says so.
//
// The SQLite library opens the file by name, after the caller checked it
// (platform.CheckBeneath): a user who swaps it for a FIFO in between makes
// that open block. The read therefore runs on its own goroutine and is
// given up after sqliteTimeout and a second more; a blocked goroutine ends
// with the process.
func readSQLite(path string) ([]lease, []*ledger.Ledger, error) {
	type result struct {
		leases []lease
		codex  []*ledger.Ledger
		err    error
	}
	done := make(chan result, 1)
	go func() {
		l, c, err := readSQLiteNow(path)
		done <- result{l, c, err}
	}()
	t := time.NewTimer(sqliteTimeout + time.Second)
	defer t.Stop()
	select {
	case r := <-done:
		return r.leases, r.codex, r.err
	case <-t.C:
		return nil, nil, &ledger.Error{File: path, Msg: fmt.Sprintf("not read within %s (replaced while being opened, or held by another process): not used", sqliteTimeout+time.Second)}
	}
}

func readSQLiteNow(path string) ([]lease, []*ledger.Ledger, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(250)")
	q.Add("_pragma", "query_only(1)")
	dsn := (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, &ledger.Error{File: path, Msg: err.Error()}
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), sqliteTimeout)
	defer cancel()

	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'plugin_state_entries'`).Scan(&n)
	if err != nil {
		return nil, nil, &ledger.Error{File: path, Msg: "read: " + err.Error()}
	}
	if n == 0 {
		return nil, nil, nil // a state database without plugin state: nothing to say
	}
	// Bounded: a user's store can hold anything; a value cut at 64 KiB no
	// longer parses and is reported, never acted on.
	rows, err := db.QueryContext(ctx, `SELECT plugin_id, namespace, substr(entry_key, 1, 256), substr(value_json, 1, 65536) FROM plugin_state_entries
		WHERE (plugin_id = 'acpx' AND namespace = 'process-leases')
		   OR (plugin_id = 'codex' AND namespace = 'app-server-processes')
		ORDER BY plugin_id, entry_key LIMIT 10000`)
	if err != nil {
		return nil, nil, &ledger.Error{File: path, Msg: "read plugin_state_entries: " + err.Error()}
	}
	defer rows.Close()
	var leases []lease
	var codex []*ledger.Ledger
	var bad []string
	for rows.Next() {
		var plugin, namespace, key, value string
		if err := rows.Scan(&plugin, &namespace, &key, &value); err != nil {
			return nil, nil, &ledger.Error{File: path, Msg: "read plugin_state_entries: " + err.Error()}
		}
		where := fmt.Sprintf("%s/%s/%s", plugin, namespace, key)
		switch plugin {
		case "acpx":
			var l lease
			if err := json.Unmarshal([]byte(value), &l); err != nil {
				bad = append(bad, where+": "+err.Error())
				continue
			}
			if l.LeaseID == "" {
				l.LeaseID = key
			}
			leases = append(leases, l)
		case "codex":
			var c codexProcess
			if err := json.Unmarshal([]byte(value), &c); err != nil {
				bad = append(bad, where+": "+err.Error())
				continue
			}
			l, err := c.ledger(path+" codex/app-server-processes", key)
			if err != nil {
				bad = append(bad, where+": "+err.Error())
				continue
			}
			codex = append(codex, l)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, &ledger.Error{File: path, Msg: "read plugin_state_entries: " + err.Error()}
	}
	if len(bad) > 0 {
		return leases, codex, &ledger.Error{File: path, Msg: fmt.Sprintf("%d rows did not parse, first: %s", len(bad), bad[0])}
	}
	return leases, codex, nil
}
