package openclaw

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client/sqlitestore"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Under a live gateway the leaks are not orphans: OpenClaw 2026.9 keeps a
// background exec running after the session that started it is deleted or
// reset, its task_runs row still "running". The task store and the agents'
// session stores are the evidence: an exec row names its session and its
// command, and the session stores say which sessions still exist.

// ExecTask is one background exec row of the task store
// (<state>/state/openclaw.sqlite, task_runs with task_kind 'exec'). It
// records no pid: only the command text and the row's time, the exec's
// start as OpenClaw took it, before it spawned the process (startAfter).
type ExecTask struct {
	TaskID     string    `json:"id"`
	Slug       string    `json:"slug,omitempty"` // source_id, such as "dawn-daisy"; the run id is exec:<slug>
	SessionKey string    `json:"session,omitempty"`
	Command    string    `json:"cmd"`
	Status     string    `json:"status"` // running, succeeded, failed, cancelled, …
	Created    time.Time `json:"at"`
}

// Sessions is what the agents' session stores
// (<state>/agents/<agent>/agent/openclaw-agent.sqlite) say about session
// keys: which exist now, which were deleted, when a live one was last reset.
type Sessions struct {
	Live    map[string]bool
	Deleted map[string]bool
	Reset   map[string]time.Time
}

// merge adds what another agent's store says: a key is live, deleted or
// reset if either says so; a reset keeps its latest time.
func (ss *Sessions) merge(o *Sessions) {
	for k := range o.Live {
		ss.Live[k] = true
	}
	for k := range o.Deleted {
		ss.Deleted[k] = true
	}
	for k, t := range o.Reset {
		if t.After(ss.Reset[k]) {
			ss.Reset[k] = t
		}
	}
}

// Tasks is what one state dir's task and session stores say.
type Tasks struct {
	Source string // the task store
	Execs  ExecRows
	// Sessions is nil when no session store was read: then no run can be
	// shown session-ended.
	Sessions *Sessions
	// Codex is the codex plugin's registry and threads (nil: none).
	Codex *CodexRows
	// owner is the uid the state dir belongs to: its rows are tied only to
	// that user's processes (a user's store can name anyone's pids and
	// commands). platform.AnyOwner ties to any.
	owner int
	// BadCodexRows counts codex rows that did not parse (skipped).
	BadCodexRows int
}

// maxTaskRows bounds the rows read from one store (the newest), and
// maxCommand the command text of a row: a longer command is cut to its
// first 4 KiB, which must still be held by exactly one process to match.
const (
	maxTaskRows = 10_000
	maxCommand  = 4096
)

// ReadTasks is ReadState's task and session stores: nil when there is no
// state store.
func ReadTasks(dir string) (*Tasks, []error) {
	st, errs := ReadState(dir, Boot{})
	if st == nil {
		return nil, errs
	}
	return st.Tasks, errs
}

// readExecs reads the newest exec rows of task_runs, each text field cut
// (a user's store can hold anything), so one store costs a few MiB at
// most: as
//
//	SELECT substr(task_id, 1, 128), substr(coalesce(source_id, ''), 1, 128),
//		substr(coalesce(requester_session_key, ''), 1, 512), substr(task, 1, maxCommand), substr(status, 1, 32), created_at
//	FROM task_runs WHERE task_kind = 'exec' ORDER BY created_at DESC LIMIT maxTaskRows
//
// would read them. A NULL task, status or time fails the read, as it
// failed the query's scan.
func (t *Tasks) readExecs(db *sqlitestore.DB) error {
	type row struct {
		e       ExecTask
		created int64
		n       int
	}
	top := sqlitestore.NewTop(maxTaskRows, func(a, b row) int { return cmp.Or(cmp.Compare(b.created, a.created), a.n-b.n) })
	n := 0
	err := db.Rows("task_runs", []string{"task_id", "source_id", "requester_session_key", "task", "status", "created_at", "task_kind"}, func(v []sqlitestore.Value) error {
		if n++; !v[6].Is("exec") {
			return nil
		}
		r := row{n: n}
		var okID, okTask, okStatus, okAt bool
		r.e.TaskID, okID = v[0].String(128)
		r.e.Slug, _ = v[1].String(128) // coalesce(source_id, '')
		r.e.SessionKey, _ = v[2].String(512)
		r.e.Command, okTask = v[3].String(maxCommand)
		r.e.Status, okStatus = v[4].String(32)
		r.created, okAt = v[5].Int64()
		if !okID || !okTask || !okStatus || !okAt {
			return fmt.Errorf("task_runs: an exec row with a NULL task_id, task or status, or a created_at not an integer")
		}
		top.Add(r)
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range top.Sorted() {
		r.e.Created = time.UnixMilli(r.created)
		t.Execs = append(t.Execs, r.e)
	}
	return nil
}

// ExecRows are a store's exec rows. As JSON (a reader child hands them to
// its parent) they decode into a slice made to fit: encoding/json appends
// into the capacity a slice has, and counting the array's elements first
// spares the doublings — thousands of rows for each of many users.
type ExecRows []ExecTask

// UnmarshalJSON decodes the array into a slice of its exact length. A
// reader never prints more than maxTaskRows rows of a store; more is not
// what a reader prints, and no slice is sized from it.
func (r *ExecRows) UnmarshalJSON(b []byte) error {
	n := countElements(b)
	if n > maxTaskRows {
		return fmt.Errorf("%d exec rows: a reader reads at most %d", n, maxTaskRows)
	}
	rows := make([]ExecTask, 0, n)
	if err := json.Unmarshal(b, &rows); err != nil {
		return err
	}
	*r = rows
	return nil
}

// countElements counts the elements of a JSON array by its top-level
// commas, outside strings; for anything else it says 0 (the decoder then
// reports what is wrong).
func countElements(b []byte) int {
	depth, n, inString, any := 0, 0, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString, any = true, true
		case c == '[' || c == '{':
			if depth == 1 {
				any = true
			}
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
		case depth == 1 && c > ' ':
			any = true
		}
	}
	if !any {
		return 0
	}
	return n + 1
}

// storeError is the error of a store that could not be read.
func storeError(path, table string, err error) error {
	var le *ledger.Error
	if errors.As(err, &le) {
		return le
	}
	return &ledger.Error{File: path, Msg: "read " + table + ": " + err.Error()}
}

// readSessions reads every agent's session store. Any store that exists
// and can't be read makes the whole answer unknown (nil): a session it
// holds might be live.
func readSessions(sd statedir.Dir) (*Sessions, []error) {
	stores, _ := filepath.Glob(filepath.Join(sd.Path, "agents", "*", "agent", "openclaw-agent.sqlite"))
	if len(stores) == 0 {
		return nil, nil
	}
	if len(stores) > maxAgents {
		return nil, []error{&ledger.Error{File: filepath.Join(sd.Path, "agents"), Msg: fmt.Sprintf("%d agent session stores: more than %d, none read", len(stores), maxAgents)}}
	}
	ss := &Sessions{Live: map[string]bool{}, Deleted: map[string]bool{}, Reset: map[string]time.Time{}}
	for _, path := range stores {
		rel, err := filepath.Rel(sd.Path, path)
		if err != nil {
			return nil, []error{ledger.ReadError(path, err)}
		}
		var one *Sessions
		err = sqlitestore.Query(sd.Path, rel, sd.Owner, func(db *sqlitestore.DB) error {
			one = &Sessions{Live: map[string]bool{}, Deleted: map[string]bool{}, Reset: map[string]time.Time{}}
			return readSessionStore(db, one)
		})
		if err != nil {
			return nil, []error{storeError(path, "session_nodes", err)}
		}
		ss.merge(one)
	}
	for key := range ss.Live {
		delete(ss.Deleted, key) // a key deleted once and used again is live
	}
	return ss, nil
}

// readSessionStore reads an agent's session store: as
//
//	SELECT substr(session_key, 1, 512), archived_at IS NOT NULL FROM session_nodes LIMIT maxTaskRows
//
// and, of session_transcript_archives, the deletions and each session's
// newest reset, as
//
//	SELECT substr(session_key, 1, 512), substr(reason, 1, 32), max(created_at) FROM session_transcript_archives
//	GROUP BY session_key, reason LIMIT maxTaskRows
//
// would read them, the groups kept in memory for 2×maxTaskRows at most.
func readSessionStore(db *sqlitestore.DB, ss *Sessions) error {
	have, err := db.Tables("session_nodes", "session_transcript_archives")
	if err != nil {
		return err
	}
	if !have["session_nodes"] {
		return errors.New("no session_nodes table")
	}
	n := 0
	err = db.Rows("session_nodes", []string{"session_key", "archived_at"}, func(v []sqlitestore.Value) error {
		if n++; n > maxTaskRows {
			return sqlitestore.ErrStop
		}
		key, ok := v[0].String(512)
		if !ok {
			return errors.New("session_nodes: a NULL session_key")
		}
		if v[1].Class != sqlitestore.Null {
			ss.Deleted[key] = true
		} else {
			ss.Live[key] = true
		}
		return nil
	})
	if err != nil || !have["session_transcript_archives"] {
		return err
	}
	groups, err := archiveGroups(db)
	if err != nil {
		return err
	}
	for g, at := range groups {
		switch g.reason {
		case "deleted":
			ss.Deleted[g.key] = true
		case "reset":
			if t := time.UnixMilli(at); t.After(ss.Reset[g.key]) {
				ss.Reset[g.key] = t
			}
		}
	}
	return nil
}

// archiveGroup is one (session_key, reason) of the archives.
type archiveGroup struct{ key, reason string }

func (a archiveGroup) compare(b archiveGroup) int {
	return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.reason, b.reason))
}

// archiveGroups is the newest created_at of the first maxTaskRows
// (session_key, reason) groups, in their order. Past 2×maxTaskRows groups
// the greatest are dropped, and any group after the greatest kept is
// never taken: it cannot be among the first maxTaskRows.
func archiveGroups(db *sqlitestore.DB) (map[archiveGroup]int64, error) {
	type newest struct {
		at  int64
		set bool
	}
	groups := map[archiveGroup]newest{}
	var cutoff *archiveGroup
	prune := func(keep int) {
		keys := slices.SortedFunc(maps.Keys(groups), archiveGroup.compare)
		for _, k := range keys[keep:] {
			delete(groups, k)
		}
		last := keys[keep-1]
		cutoff = &last
	}
	err := db.Rows("session_transcript_archives", []string{"session_key", "reason", "created_at"}, func(v []sqlitestore.Value) error {
		var g archiveGroup
		var ok1, ok2 bool
		g.key, ok1 = v[0].String(512)
		g.reason, ok2 = v[1].String(32)
		if !ok1 || !ok2 {
			return errors.New("session_transcript_archives: a NULL session_key or reason")
		}
		if cutoff != nil && g.compare(*cutoff) > 0 {
			return nil
		}
		cur := groups[g]
		if v[2].Class != sqlitestore.Null {
			at, ok := v[2].Int64()
			if !ok {
				return errors.New("session_transcript_archives: a created_at not an integer")
			}
			if !cur.set || at > cur.at {
				cur = newest{at, true}
			}
		}
		groups[g] = cur
		if len(groups) > 2*maxTaskRows {
			prune(maxTaskRows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(groups) > maxTaskRows {
		prune(maxTaskRows)
	}
	out := make(map[archiveGroup]int64, len(groups))
	for g, n := range groups {
		if !n.set {
			return nil, errors.New("session_transcript_archives: a group with no created_at")
		}
		out[g] = n.at
	}
	return out, nil
}

// startWindow is where a matching process's start may lie around the row's
// creation. OpenClaw 2026.9 lowers a row's created_at to the exec's
// startedAt (normalizeTaskTimestamps), taken when runExecProcess begins:
// before the command is wrapped in the login shell's snapshot and
// spawned. A gateway's first exec captures that snapshot first (a
// validation of up to 2 s, a capture of up to 5 s), so its process starts
// seconds after its row's time: on a loaded machine more than the 1 s
// once allowed, and the first session's exec was tied to nothing. Rows of
// releases that stamp the row when written, after the spawn, are met by
// startBefore.
const (
	startBefore = 5 * time.Second
	startAfter  = 15 * time.Second
)

// Ledger ties each exec row to the live process that runs it, and returns
// the rows as a ledger of owner (the gateway the state dir's lock names).
// A row has no pid, so a process matches when it started in the row's
// window and its command line holds the row's command text; only a unique
// match counts, and its start identity is then recorded, so the scan
// verifies it like any run. Rows of a running exec with no match, or with
// several, are listed with no pid and never acted on. The session of each
// row is closed when the session stores show it deleted, reset when it
// was reset after the row was written, active when it exists.
func (t *Tasks) Ledger(owner ledger.Owner, s *platform.Snapshot) *ledger.Ledger {
	l := &ledger.Ledger{Version: ledger.Version, Owner: owner, Speaker: t.speaker(),
		Source: t.Source + " task_runs (exec rows tied to processes by command text and start time, unique matches only)"}
	sessions := map[string]ledger.SessionState{}
	for _, e := range t.Execs {
		done := e.Status != "running" && e.Status != "queued"
		matches := matchExec(e, s, t.owner)
		if done && len(matches) == 0 {
			continue // finished, and nothing runs it: nothing to say (most rows)
		}
		run := ledger.Run{ID: "exec:" + e.Slug, Kind: ledger.KindExec, Command: e.Command, State: ledger.RunRunning}
		if e.Slug == "" {
			run.ID = "exec:" + e.TaskID
		}
		if done {
			run.State = ledger.RunDone
		}
		created := e.Created
		run.StartedAt = &created
		switch {
		case len(matches) == 1:
			p := matches[0]
			run.PID, run.Start = p.PID, s.Identity(p)
			if s.PTYShell(p) {
				// An exec with pty: true: the row says exec, the kernel
				// says a shell on a pseudo-terminal, and that is its kind.
				run.Kind = ledger.KindPTY
			}
			run.Proof = fmt.Sprintf("tied to pid %d by its command text and start time (the only process that matches)", p.PID)
		case run.State == ledger.RunDone:
			continue // finished, and nothing runs it: nothing to say
		case len(matches) == 0:
			run.Note = "no live process ran this command then: not tied to any (listed, never acted on)"
		default:
			run.Note = fmt.Sprintf("ambiguous: %d processes ran this command then (listed, never acted on)", len(matches))
		}
		if key, state, ok := t.sessionOf(e); ok {
			run.Session = key
			sessions[key] = state
		}
		l.Runs = append(l.Runs, run)
	}
	for key, state := range sessions {
		l.Sessions = append(l.Sessions, ledger.Session{Key: key, State: state})
	}
	return l
}

// sessionOf is the session a row's run belongs to, as the ledger sees it.
func (t *Tasks) sessionOf(e ExecTask) (string, ledger.SessionState, bool) {
	if t.Sessions == nil || e.SessionKey == "" {
		return "", "", false
	}
	ss := t.Sessions
	switch {
	case ss.Live[e.SessionKey]:
		if r, ok := ss.Reset[e.SessionKey]; ok && r.After(e.Created) {
			return e.SessionKey + " (before its reset at " + r.UTC().Format(time.RFC3339) + ")", ledger.SessionReset, true
		}
		return e.SessionKey, ledger.SessionActive, true
	case ss.Deleted[e.SessionKey]:
		return e.SessionKey, ledger.SessionClosed, true
	}
	return "", "", false // the stores don't know it: proves nothing
}

// speaker is the uid the rows are the word of: the state dir's owner
// (root's word, 0, for a Tasks built without one).
func (t *Tasks) speaker() uint32 {
	if t.owner == platform.AnyOwner {
		return 0
	}
	return uint32(t.owner)
}

// ownedBy reports whether p is uid owner's (its real uid), or owner is
// platform.AnyOwner.
func ownedBy(s *platform.Snapshot, p *platform.Process, owner int) bool {
	return owner == platform.AnyOwner || int64(s.UID(p)) == int64(owner)
}

// holdsCommand reports whether a command line holds an exec row's command
// text: as it is, or single-quoted the way OpenClaw 2026.9 wraps it when
// it sources a shell snapshot first (bash -c "… eval '<command>'"), where
// each single quote of the command is written as quote, backslash, quote,
// quote (quoted).
func holdsCommand(cmdline, cmd, quoted string) bool {
	return strings.Contains(cmdline, cmd) || (quoted != cmd && strings.Contains(cmdline, quoted))
}

// matchExec returns the live processes that may run the exec row: started
// in its window, carrying OPENCLAW_SHELL=exec, their command line holding
// its command text, of the store's owner. Only the window's processes have
// their details read.
func matchExec(e ExecTask, s *platform.Snapshot, owner int) []*platform.Process {
	cmd := strings.TrimSpace(e.Command)
	if len(cmd) < 3 {
		return nil
	}
	from, to := e.Created.Add(-startBefore), e.Created.Add(startAfter)
	quoted := strings.ReplaceAll(cmd, "'", `'\''`)
	var out []*platform.Process
	for _, p := range s.StartedBetween(from, to) {
		if p.KernelThread() || p.Zombie() {
			continue
		}
		// OpenClaw's exec children carry its marker: a process without
		// it (or whose environment can't be read) is not the row's. The
		// command text is looked at first: the command line is read (and
		// kept) for most candidates anyway, and it rules out nearly every
		// process of a busy window before its status or environment is read.
		if !holdsCommand(s.CommandLine(p), cmd, quoted) || !ownedBy(s, p, owner) {
			continue
		}
		if shell, _ := s.Getenv(p, EnvShell); shell == "exec" {
			out = append(out, p)
		}
	}
	// A shell and the command it runs can both hold the text; the outermost
	// is the tree's root.
	var roots []*platform.Process
	for _, p := range out {
		inner := false
		for _, q := range out {
			inner = inner || q.PID == p.PPID
		}
		if !inner {
			roots = append(roots, p)
		}
	}
	return roots
}
