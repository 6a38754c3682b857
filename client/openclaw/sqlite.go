package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"

	_ "modernc.org/sqlite" // pure-Go SQLite: OpenClaw's Gen C state is a WAL-mode database

	"github.com/orphanreaper/reaper/client/sqlitestore"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
)

// storeRows is what reaper reads of a state store: the leases, and the
// task rows with the codex plugin's.
type storeRows struct {
	leases []lease
	tasks  *Tasks
}

// readStore reads <state>/state/openclaw.sqlite in one bounded read
// (sqlitestore.Query): the plugin state rows that name processes —
// ('acpx','process-leases',leaseId) → lease JSON, the codex app-server
// registry ('codex','app-server-processes',key) → {parent, child} and the
// codex thread namespaces — and the exec rows of task_runs. A user's store
// can hold anything, so rows and fields are bounded: keys and values are
// cut, and a value cut at 64 KiB no longer parses and is reported, never
// acted on. What was read is returned with the error of rows that did not
// parse.
func readStore(dir, rel string, owner int) (*storeRows, error) {
	path := filepath.Join(dir, rel)
	var out *storeRows
	var bad []string
	err := sqlitestore.Query(dir, rel, owner, func(ctx context.Context, db *sql.DB) error {
		out, bad = &storeRows{tasks: &Tasks{Source: path, Codex: &CodexRows{}}}, nil
		have, err := sqlitestore.Tables(ctx, db, "plugin_state_entries", "task_runs")
		if err != nil {
			return err
		}
		if have["plugin_state_entries"] {
			if err := out.readPluginState(ctx, db, path, &bad); err != nil {
				return err
			}
		}
		if !have["task_runs"] {
			return nil
		}
		return out.tasks.readExecs(ctx, db)
	})
	if err != nil {
		return nil, storeError(path, "plugin_state_entries and task_runs", err)
	}
	if len(bad) > 0 {
		return out, &ledger.Error{File: path, Msg: fmt.Sprintf("%d rows did not parse, first: %s", len(bad), bad[0])}
	}
	return out, nil
}

func (out *storeRows) readPluginState(ctx context.Context, db *sql.DB, path string, bad *[]string) error {
	rows, err := db.QueryContext(ctx, `SELECT plugin_id, namespace, substr(entry_key, 1, 256), substr(value_json, 1, 65536) FROM plugin_state_entries
		WHERE (plugin_id = 'acpx' AND namespace = 'process-leases')
		   OR (plugin_id = 'codex' AND namespace IN ('app-server-processes', 'app-server-thread-bindings', 'app-server-managed-threads'))
		ORDER BY plugin_id, namespace, entry_key LIMIT ?`, maxPluginRows)
	if err != nil {
		return err
	}
	defer rows.Close()
	cx := out.tasks.Codex
	for rows.Next() {
		var plugin, namespace, key, value string
		if err := rows.Scan(&plugin, &namespace, &key, &value); err != nil {
			return err
		}
		where := fmt.Sprintf("%s/%s/%s", plugin, namespace, statedir.KeyName(key))
		switch {
		case plugin == "acpx":
			var l lease
			if err := json.Unmarshal([]byte(value), &l); err != nil {
				*bad = append(*bad, where+": "+statedir.JSONProblem(err))
				continue
			}
			if l.LeaseID == "" {
				l.LeaseID = key
			}
			out.leases = append(out.leases, l)
		case namespace == "app-server-processes":
			var c codexProcess
			if err := json.Unmarshal([]byte(value), &c); err != nil {
				*bad = append(*bad, where+": "+statedir.JSONProblem(err))
				continue
			}
			c.Key = key
			if err := c.check(); err != nil {
				*bad = append(*bad, where+": "+err.Error())
				continue
			}
			cx.Servers = append(cx.Servers, c)
		default: // the thread namespaces: a row that does not parse only holds back
			if !cx.add(namespace, value) {
				out.tasks.BadCodexRows++
			}
		}
	}
	return rows.Err()
}

// maxPluginRows bounds the plugin state rows read from one store.
const maxPluginRows = 20_000
