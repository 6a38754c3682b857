package openclaw

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// The codex plugin (@openclaw/codex) runs one codex app-server for all of a
// gateway's sessions: gateway → node codex.js app-server (registered in
// ('codex','app-server-processes')) → the native codex → one stdio MCP
// server per thread, each in its own process group. When a session is
// deleted its thread binding goes, but the app-server keeps the thread's
// MCP servers until it exits: under a live gateway they pile up.

// CodexOwnerName is the owner the app-server's MCP servers are attributed to.
const CodexOwnerName = "codex-app-server"

// CodexThread is a thread the codex plugin's namespaces name.
type CodexThread struct {
	ID string
	// Started is when the thread was created, from its UUIDv7 id (whose
	// first 48 bits are Unix milliseconds); zero when the id is no v7.
	Started time.Time
	// Bound: a session is bound to it (app-server-thread-bindings); a
	// managed thread no binding names belongs to a session that ended.
	Bound bool
}

// CodexRows are the codex plugin's rows of one state store: the
// app-server registry and the threads its namespaces name.
type CodexRows struct {
	Servers []codexProcess `json:"servers,omitempty"`
	Threads []CodexThread  `json:"threads,omitempty"`
	byID    map[string]int // thread id → index in Threads
}

// add parses one row's value; false when it does not parse.
func (cx *CodexRows) add(namespace, value string) bool {
	switch namespace {
	case "app-server-processes":
		var c codexProcess
		if json.Unmarshal([]byte(value), &c) != nil || c.Child.PID <= 0 {
			return false
		}
		cx.Servers = append(cx.Servers, c)
	case "app-server-thread-bindings":
		var b struct {
			Binding struct {
				ThreadID string `json:"threadId"`
			} `json:"binding"`
		}
		if json.Unmarshal([]byte(value), &b) != nil {
			return false
		}
		// A binding in any state keeps its thread: only its absence says
		// the session is gone.
		return cx.thread(b.Binding.ThreadID, true)
	case "app-server-managed-threads":
		var m struct {
			ThreadID string `json:"threadId"`
		}
		if json.Unmarshal([]byte(value), &m) != nil {
			return false
		}
		return cx.thread(m.ThreadID, false)
	}
	return true
}

// thread records a thread id once; bound once is bound.
func (cx *CodexRows) thread(id string, bound bool) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	if cx.byID == nil {
		cx.byID = map[string]int{}
	}
	k, ok := cx.byID[id]
	if !ok {
		k = len(cx.Threads)
		cx.byID[id] = k
		cx.Threads = append(cx.Threads, CodexThread{ID: id, Started: uuidV7Time(id)})
	}
	cx.Threads[k].Bound = cx.Threads[k].Bound || bound
	return true
}

// uuidV7Time is the creation time a version-7 UUID carries, or zero.
func uuidV7Time(id string) time.Time {
	h := strings.ReplaceAll(id, "-", "")
	if len(h) != 32 || h[12] != '7' {
		return time.Time{}
	}
	b, err := hex.DecodeString(h[:12])
	if err != nil {
		return time.Time{}
	}
	var ms int64
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return time.UnixMilli(ms)
}

// CodexAppServer is a live codex app-server of the state dir, with the MCP
// servers it runs and what the thread records say about each.
type CodexAppServer struct {
	PID         int    // the registered child: node …/codex.js app-server
	Start       string // its start identity, as registered and seen
	LiveThreads int    // threads a session is bound to
	Children    []CodexChild
}

// CodexChild is one MCP server under the app-server.
type CodexChild struct {
	PID    int
	Start  string // its start identity
	Server string // the configured server it runs
	// Thread is the thread it was tied to by start time ("" when none
	// could be, or several could), and Bound whether a session still is.
	Thread string
	Bound  bool
	Why    string // how it was tied, or why not
}

// Ended reports whether the child is tied to a thread no session is bound to.
func (c CodexChild) Ended() bool { return c.Thread != "" && !c.Bound }

// threadWindow is where an MCP server's start may lie around its thread's
// creation: codex starts a thread's servers as it starts the thread (20 to
// 45 ms after the id's time here).
const (
	threadBefore = time.Second
	threadAfter  = 5 * time.Second
)

// CodexAppServers finds the live app-servers the state store registers —
// the registered pid with the registered start identity, a process of the
// state dir's owner — and the configured MCP servers the native codex
// under each runs (its children, of the same owner). Each is tied to the
// thread created just before it started when exactly one thread fits the
// window and no other server fits that thread.
func (t *Tasks) CodexAppServers(s *platform.Snapshot, servers []MCPServer) []CodexAppServer {
	if t == nil || t.Codex == nil || len(t.Codex.Servers) == 0 {
		return nil
	}
	live := 0
	for _, th := range t.Codex.Threads {
		if th.Bound {
			live++
		}
	}
	var out []CodexAppServer
	index := map[int]int{} // app-server pid → index in out: a row names it once
	for _, reg := range t.Codex.Servers {
		app := s.Get(reg.Child.PID)
		if app == nil || app.Zombie() || reg.Child.StartedAt == "" || s.Identity(app) != reg.Child.StartedAt || !ownedBy(s, app, t.owner) {
			continue // gone, another process now, or not the store owner's: the registry proves nothing about it
		}
		if _, dup := index[app.PID]; !dup {
			index[app.PID] = len(out)
			out = append(out, CodexAppServer{PID: app.PID, Start: reg.Child.StartedAt, LiveThreads: live})
		}
	}
	if len(out) == 0 {
		return nil
	}
	// One pass over the table: servers are children of the native codex,
	// the app-server's child.
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Zombie() || p.KernelThread() {
			continue
		}
		parent := s.Get(p.PPID)
		if parent == nil {
			continue
		}
		k, ok := index[parent.PPID]
		if !ok {
			continue
		}
		argv := s.Cmdline(p)
		for j := range servers {
			if servers[j].Matches(argv) && ownedBy(s, p, t.owner) {
				out[k].Children = append(out[k].Children, CodexChild{PID: p.PID, Start: s.Identity(p), Server: servers[j].Name})
				break
			}
		}
	}
	for k := range out {
		t.tieThreads(s, &out[k])
	}
	return out
}

// tieThreads ties each child to the one thread whose creation fits its
// start, when no other child fits that thread too.
func (t *Tasks) tieThreads(s *platform.Snapshot, as *CodexAppServer) {
	fits := make([][]int, len(as.Children)) // child → threads
	claims := map[int]int{}                 // thread → children fitting it
	for c := range as.Children {
		p := s.Get(as.Children[c].PID)
		started := s.Taken.Add(-s.Age(p))
		for k, th := range t.Codex.Threads {
			if th.Started.IsZero() || started.Before(th.Started.Add(-threadBefore)) || started.After(th.Started.Add(threadAfter)) {
				continue
			}
			fits[c] = append(fits[c], k)
			claims[k]++
		}
	}
	for c := range as.Children {
		ch := &as.Children[c]
		switch {
		case len(fits[c]) == 0:
			ch.Why = "no thread record was created when it started: not tied"
		case len(fits[c]) > 1 || claims[fits[c][0]] > 1:
			ch.Why = "several threads or servers started together: not tied"
		default:
			th := t.Codex.Threads[fits[c][0]]
			ch.Thread, ch.Bound = th.ID, th.Bound
			ch.Why = fmt.Sprintf("tied to codex thread %s (created %s) by start time: the only MCP server of app-server pid %d started then",
				th.ID, th.Started.UTC().Format("15:04:05.000"), as.PID)
		}
	}
	sort.Slice(as.Children, func(i, j int) bool { return as.Children[i].PID < as.Children[j].PID })
}

// CodexLedger is the app-servers' MCP servers tied to threads, as a ledger
// of the app-server: a server of a thread a session is bound to is its
// live owner's run; one of a thread no session is bound to any more is in
// a closed session. Servers not tied to a thread are not in it.
func (t *Tasks) CodexLedger(as CodexAppServer, owner ledger.Owner) *ledger.Ledger {
	source := t.Source
	l := &ledger.Ledger{Version: ledger.Version, Owner: owner, Speaker: t.speaker(),
		Source: source + " codex app-server-thread-bindings and app-server-managed-threads (MCP servers tied to threads by start time, unique matches only)"}
	for _, ch := range as.Children {
		if ch.Thread == "" {
			continue
		}
		key := "codex-thread:" + ch.Thread
		state := ledger.SessionClosed
		if ch.Bound {
			state = ledger.SessionActive
		}
		l.Runs = append(l.Runs, ledger.Run{ID: key, Kind: ledger.KindMCP, PID: ch.PID, Start: ch.Start, State: ledger.RunRunning,
			Session: key, Command: ch.Server, Proof: ch.Why})
		l.Sessions = append(l.Sessions, ledger.Session{Key: key, State: state})
	}
	return l
}
