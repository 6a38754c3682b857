package openclaw

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"

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
	err := sqlitestore.Query(dir, rel, owner, func(db *sqlitestore.DB) error {
		out, bad = &storeRows{tasks: &Tasks{Source: path, Codex: &CodexRows{}}}, nil
		have, err := db.Tables("plugin_state_entries", "task_runs")
		if err != nil {
			return err
		}
		if have["plugin_state_entries"] {
			if err := out.readPluginState(db, &bad); err != nil {
				return err
			}
		}
		if !have["task_runs"] {
			return nil
		}
		return out.tasks.readExecs(db)
	})
	if err != nil {
		return nil, storeError(path, "plugin_state_entries and task_runs", err)
	}
	if len(bad) > 0 {
		return out, &ledger.Error{File: path, Msg: fmt.Sprintf("%d rows did not parse, first: %s", len(bad), bad[0])}
	}
	return out, nil
}

// pluginRow is one plugin state row reaper reads.
type pluginRow struct {
	plugin, namespace, key, value string
	rowid                         int
}

// pluginRows are the plugin state rows that name processes: as
//
//	SELECT plugin_id, namespace, substr(entry_key, 1, 256), substr(value_json, 1, 65536) FROM plugin_state_entries
//	WHERE (plugin_id = 'acpx' AND namespace = 'process-leases')
//	   OR (plugin_id = 'codex' AND namespace IN ('app-server-processes', 'app-server-thread-bindings', 'app-server-managed-threads'))
//	ORDER BY plugin_id, namespace, entry_key LIMIT maxPluginRows
//
// would read them, in memory for maxPluginRows rows.
func pluginRows(db *sqlitestore.DB) ([]pluginRow, error) {
	top := sqlitestore.NewTop(maxPluginRows, func(a, b pluginRow) int {
		return cmp.Or(cmp.Compare(a.plugin, b.plugin), cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.key, b.key), cmp.Compare(a.rowid, b.rowid))
	})
	n := 0
	err := db.Rows("plugin_state_entries", []string{"plugin_id", "namespace", "entry_key", "value_json"}, func(v []sqlitestore.Value) error {
		n++
		if !(v[0].Is("acpx") && v[1].Is("process-leases")) && !(v[0].Is("codex") && codexNamespaces[string(v[1].Bytes)] && v[1].Class == sqlitestore.Text) {
			return nil
		}
		r := pluginRow{plugin: string(v[0].Bytes), namespace: string(v[1].Bytes), rowid: n}
		var ok1, ok2 bool
		r.key, ok1 = v[2].String(256)
		r.value, ok2 = v[3].String(65536)
		if !ok1 || !ok2 {
			return fmt.Errorf("plugin_state_entries: a NULL key or value")
		}
		top.Add(r)
		return nil
	})
	return top.Sorted(), err
}

// codexNamespaces are the codex plugin's namespaces reaper reads.
var codexNamespaces = map[string]bool{"app-server-processes": true, "app-server-thread-bindings": true, "app-server-managed-threads": true}

func (out *storeRows) readPluginState(db *sqlitestore.DB, bad *[]string) error {
	rows, err := pluginRows(db)
	if err != nil {
		return err
	}
	cx := out.tasks.Codex
	for _, r := range rows {
		plugin, namespace, key, value := r.plugin, r.namespace, r.key, r.value
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
	return nil
}

// maxPluginRows bounds the plugin state rows read from one store.
const maxPluginRows = 20_000
