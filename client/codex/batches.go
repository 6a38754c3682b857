package codex

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/client/sqlitestore"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Server batches under a live app-server. An app-server runs one copy of
// each configured stdio server per loaded thread; releases before 0.169
// (and the Desktop app) leave a replaced or unloaded thread's copies
// running, batch after batch, under an app-server that lives on (openai/codex
// #28361, #40579: 515 processes, 17 GiB). No API gives a pid; the log store,
// <CODEX_HOME>/logs_2.sqlite, does say which threads each app-server
// process loaded (rows with a thread_id, by process_uuid =
// pid:<pid>:<uuid>) and which it unloaded ("thread T has no subscribers
// and is idle; shutting down"). More copies of a server than loaded
// threads is reported, never acted on: which copy is whose is not shown.

const (
	logStore = "logs_2.sqlite"
	// maxLogThreads bounds the (process, thread) pairs read.
	maxLogThreads = 4096
	// batchHold is how old a copy must be to count: a reload or a status
	// probe starts and stops a full set within it (under 2 s here).
	batchHold = 2 * time.Second
)

// AppServerLog is what the log store says of one app-server process: its
// pid and uuid (process_uuid), when its first row was written (ms), and the
// threads it loaded and has not unloaded.
type AppServerLog struct {
	PID    int      `json:"pid"`
	UUID   string   `json:"uuid"`
	First  int64    `json:"first"`
	Loaded []string `json:"loaded,omitempty"`
}

// processUUID is Codex's process_uuid: pid:<pid>:<uuid>.
var processUUID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^pid:([1-9][0-9]{0,9}):([0-9a-fA-F-]{1,64})$`) })

// logThread is one (process_uuid, thread_id) of the log store: its first
// row's time, and whether a row says its Codex instance shut down.
type logThread struct {
	first int64
	ended bool
}

// maxLogGroups bounds the (process, thread) pairs one read keeps: a log
// store holding more is not read (it only feeds advice).
const maxLogGroups = 64 * maxLogThreads

// maxProcessUUID is the longest process_uuid processUUID matches.
const maxProcessUUID = len("pid:") + 10 + 1 + 64

// logThreads reads the log store's threads of app-server processes: as
//
//	SELECT process_uuid, thread_id, min(ts),
//		max(target = 'codex_core::session::handlers' AND feedback_log_body LIKE '%Shutting down Codex instance%')
//	FROM logs WHERE thread_id IS NOT NULL AND process_uuid LIKE 'pid:%'
//	GROUP BY process_uuid, thread_id ORDER BY min(ts) DESC LIMIT maxLogThreads
//
// would read them, each process with the threads it still has loaded.
// A row that is not a thread of a pid: process is passed over, as the
// query's scan passed it over.
func logThreads(db *sqlitestore.DB) ([]AppServerLog, error) {
	have, err := db.Tables("logs")
	if err != nil || !have["logs"] {
		return nil, err
	}
	type key struct{ uuid, thread string }
	groups := map[key]*logThread{}
	err = db.Rows("logs", []string{"process_uuid", "thread_id", "ts", "target", "feedback_log_body"}, func(v []sqlitestore.Value) error {
		if v[1].Class == sqlitestore.Null || !hasPrefixFold(v[0], "pid:") {
			return nil
		}
		// Cut one past the longest kept, so that a longer value is
		// passed over, never taken cut.
		pu, _ := v[0].String(maxProcessUUID + 1)
		thread, _ := v[1].String(statedir.MaxID + 1)
		ts, ok := v[2].Int64()
		if !ok || len(thread) > statedir.MaxID || len(pu) > maxProcessUUID {
			return nil
		}
		k := key{pu, thread}
		g := groups[k]
		if g == nil {
			if len(groups) == maxLogGroups {
				return fmt.Errorf("more than %d threads in the log store: not read", maxLogGroups)
			}
			g = &logThread{first: ts}
			groups[k] = g
		}
		g.first = min(g.first, ts)
		g.ended = g.ended || (v[3].Is("codex_core::session::handlers") && v[4].Class == sqlitestore.Text && scan.ContainsFold(string(v[4].Bytes), "shutting down codex instance"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	type found struct {
		key
		*logThread
	}
	top := sqlitestore.NewTop(maxLogThreads, func(a, b found) int {
		return cmp.Or(cmp.Compare(b.first, a.first), cmp.Compare(a.uuid, b.uuid), cmp.Compare(a.thread, b.thread))
	})
	for k, g := range groups {
		top.Add(found{k, g})
	}
	var logs []AppServerLog
	byUUID := map[string]int{}
	for _, f := range top.Sorted() {
		m := processUUID().FindStringSubmatch(f.uuid)
		if m == nil {
			continue
		}
		k, ok := byUUID[f.uuid]
		if !ok {
			pid, _ := strconv.Atoi(m[1])
			k, byUUID[f.uuid] = len(logs), len(logs)
			logs = append(logs, AppServerLog{PID: pid, UUID: m[2], First: f.first * 1000})
		}
		l := &logs[k]
		l.First = min(l.First, f.first*1000)
		if !f.ended {
			l.Loaded = append(l.Loaded, f.thread)
		}
	}
	return logs, nil
}

// hasPrefixFold is LIKE 'p%' on a text value: ASCII letters match in
// either case, as SQLite's LIKE folds them; p is lower case.
func hasPrefixFold(v sqlitestore.Value, p string) bool {
	return v.Class == sqlitestore.Text && len(v.Bytes) >= len(p) && scan.ContainsFold(string(v.Bytes[:len(p)]), p)
}

// readLogStore reads the log store's app-server processes and their
// loaded threads: the threads with rows of a process, but those whose
// Codex instance it shut down (codex_core's "Shutting down Codex instance",
// on the thread's own rows; 0.169.0, measured here). One query over the
// rows that name a thread, by its index, bounded in time
// (sqlitestore.Query). A store that cannot be read says nothing: it only
// feeds advice.
func (raw *Raw) readLogStore(sd statedir.Dir) {
	var logs []AppServerLog
	err := sqlitestore.Query(sd.Path, logStore, sd.Owner, func(db *sqlitestore.DB) error {
		var err error
		logs, err = logThreads(db)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		raw.ConfigProblems = append(raw.ConfigProblems, err.Error())
		return
	}
	for i := range logs {
		sort.Strings(logs[i].Loaded)
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].First < logs[j].First })
	raw.AppServers = logs
}

// batches is one CODEX_HOME's word on its live app-servers' server copies,
// for advice, spoken by uid.
type batches struct {
	uid     uint32
	dir     string
	servers []scan.Server
	logs    []AppServerLog
	daemons []int // the app-server daemons whose records verify
}

// Advise reports, for each live app-server of this CODEX_HOME — its
// daemon, whose record verifies, or a stdio `codex app-server` of uid's
// whose parent lives and whose CODEX_HOME is this dir — each configured
// server it runs more copies of than the threads the log store shows it
// has loaded.
func (b *batches) Advise(r *scan.Result, _ scan.Sampler) []scan.Advice {
	s := r.Tree.Snap
	var out []scan.Advice
	for i := range s.Procs {
		p := &s.Procs[i]
		how := b.appServer(s, p)
		if how == "" {
			continue
		}
		log := b.logOf(s, p)
		if log == nil {
			continue // no rows of this process: its threads are not known
		}
		out = append(out, b.excess(s, p, how, log)...)
	}
	return out
}

// appServer says how p is shown to be a live app-server of this
// CODEX_HOME, or "".
func (b *batches) appServer(s *platform.Snapshot, p *platform.Process) string {
	if p.Comm != "codex" || p.Zombie() || s.UID(p) != b.uid {
		return ""
	}
	for _, pid := range b.daemons {
		if pid == p.PID {
			return "its managed daemon, whose pid file verifies"
		}
	}
	if !strings.Contains(s.CommandLine(p), " app-server") || strings.Contains(s.CommandLine(p), " daemon") {
		return ""
	}
	home, ok := s.Getenv(p, EnvHome)
	if !ok || filepath.Clean(home) != b.dir {
		return ""
	}
	if q := s.Get(p.PPID); q == nil || q.Zombie() || p.PPID <= 1 {
		return ""
	}
	return fmt.Sprintf("a stdio app-server whose parent, pid %d, lives", p.PPID)
}

// logOf is the log store's record of p: the process_uuid of its pid
// whose first row is not older than p.
func (b *batches) logOf(s *platform.Snapshot, p *platform.Process) *AppServerLog {
	started := s.Started(p).Add(-time.Second)
	var found *AppServerLog
	for i := range b.logs {
		if l := &b.logs[i]; l.PID == p.PID && !time.UnixMilli(l.First).Before(started) {
			found = l
		}
	}
	return found
}

// excess is the advice on app-server p's children: per configured
// server, the copies older than batchHold against its loaded threads.
func (b *batches) excess(s *platform.Snapshot, p *platform.Process, how string, log *AppServerLog) []scan.Advice {
	var out []scan.Advice
	var kids []*platform.Process // its children old enough to count, found once
	for i := range s.Procs {
		if q := &s.Procs[i]; q.PPID == p.PID && !q.Zombie() && s.Age(q) >= batchHold {
			kids = append(kids, q)
		}
	}
	for k := range b.servers {
		srv := &b.servers[k]
		var copies []*platform.Process
		var rss uint64
		for _, q := range kids {
			if srv.Matches(s.Cmdline(q)) {
				copies = append(copies, q)
				rss += q.RSS
			}
		}
		extra := len(copies) - len(log.Loaded)
		if extra <= 0 {
			continue
		}
		sort.Slice(copies, func(i, j int) bool { return copies[i].StartTicks < copies[j].StartTicks })
		var oldest []string
		for _, q := range copies[:min(extra, 20)] {
			oldest = append(oldest, strconv.Itoa(q.PID))
		}
		out = append(out, scan.Advice{ID: "codex-mcp-batches", Severity: "warning",
			Evidence: fmt.Sprintf("codex app-server pid %d (%s) runs %d copies of MCP server %q (%s), %.0f MiB, for %d loaded threads (%s, process %s): %d more than one a thread; the oldest %d, likely of ended threads or earlier reloads: pids %s",
				p.PID, how, len(copies), srv.Name, srv.File, float64(rss)/(1<<20), len(log.Loaded), logStore, log.UUID, extra, extra, strings.Join(oldest, ", ")),
			Setting: "Codex 0.169.0 stops a replaced server within config/mcpServer/reload and an unloaded thread's about 60 s later: upgrade Codex (npm install -g @openai/codex), or restart this app-server; reaper signals nothing under a live app-server on this evidence"})
	}
	return out
}

// checkedLogs are the app-server logs of a read bounded as its reader
// bounds them (Judge trusts no reader).
func checkedLogs(logs []AppServerLog) []AppServerLog {
	n := 0
	var out []AppServerLog
	for _, l := range logs {
		n += len(l.Loaded)
		if statedir.CheckID("uuid", l.UUID) == "" && n <= maxLogThreads {
			out = append(out, l)
		}
	}
	return out
}
