package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite: OpenClaw's Gen C state is a WAL-mode database

	"github.com/orphanreaper/reaper/ledger"
)

// sqliteTimeout bounds the whole read of the state database: the gateway
// may hold it, and reaper must not wait on it.
const sqliteTimeout = 2 * time.Second

// readSQLite reads the rows of <state>/state/openclaw.sqlite that
// name processes: ('acpx','process-leases',leaseId) → lease JSON, and
// ('codex','app-server-processes',key) → {parent, child}. The read is
// read-only and bounded in time (queryBounded) and in size: a user's store
// can hold anything, so keys and values are cut, and a value cut at 64 KiB
// no longer parses and is reported, never acted on.
func readSQLite(path string) ([]lease, []*ledger.Ledger, error) {
	var leases []lease
	var codex []*ledger.Ledger
	var bad []string
	err := queryBounded(path, func(ctx context.Context, db *sql.DB) error {
		if ok, err := hasTable(ctx, db, "plugin_state_entries"); err != nil || !ok {
			return err // a state database without plugin state: nothing to say
		}
		rows, err := db.QueryContext(ctx, `SELECT plugin_id, namespace, substr(entry_key, 1, 256), substr(value_json, 1, 65536) FROM plugin_state_entries
			WHERE (plugin_id = 'acpx' AND namespace = 'process-leases')
			   OR (plugin_id = 'codex' AND namespace = 'app-server-processes')
			ORDER BY plugin_id, entry_key LIMIT 10000`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var plugin, namespace, key, value string
			if err := rows.Scan(&plugin, &namespace, &key, &value); err != nil {
				return err
			}
			where := fmt.Sprintf("%s/%s/%s", plugin, namespace, keyName(key))
			switch plugin {
			case "acpx":
				var l lease
				if err := json.Unmarshal([]byte(value), &l); err != nil {
					bad = append(bad, where+": "+jsonProblem(err))
					continue
				}
				if l.LeaseID == "" {
					l.LeaseID = key
				}
				leases = append(leases, l)
			case "codex":
				var c codexProcess
				if err := json.Unmarshal([]byte(value), &c); err != nil {
					bad = append(bad, where+": "+jsonProblem(err))
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
		return rows.Err()
	})
	if err != nil {
		return nil, nil, storeError(path, "plugin_state_entries", err)
	}
	if len(bad) > 0 {
		return leases, codex, &ledger.Error{File: path, Msg: fmt.Sprintf("%d rows did not parse, first: %s", len(bad), bad[0])}
	}
	return leases, codex, nil
}
