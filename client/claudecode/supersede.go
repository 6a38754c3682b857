package claudecode

import (
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// A server superseded under a live claude (mcplog.go): the log says claude
// started server N again with no stop of the copy before, and the table
// agrees — the live, verified claude has exactly one child started at the
// later start that is N's current entry, and exactly one started at the
// earlier start that is no current entry at all. Then the earlier one is
// a run of that claude's, proven left behind: reason superseded, a
// finding of its own (the server and what it runs, never claude, its
// group or its siblings).

const (
	// supersedeHold is how long the later start must be in the past: a
	// replace in progress logs its stop of the old copy before the start
	// of the new one, within the reconnect.
	supersedeHold = 2 * time.Second
	// startBefore and startAfter bound a child's start around its log
	// line's: claude logs "Starting connection" as it spawns the server.
	startBefore = time.Second
	startAfter  = 3 * time.Second
)

// live is a session file whose claude lives and is verified: the same pid
// with the start its file records.
type live struct {
	s     Session
	owner ledger.Owner
	proc  *platform.Process
}

// supersededRuns judges each live session's MCP logs against the table:
// a ledger per session with a superseded server, whose owner is its live
// claude and whose runs are those servers.
func supersededRuns(mcp []SessionMCP, sessions map[string]live, uid uint32, snap *platform.Snapshot) []*ledger.Ledger {
	var out []*ledger.Ledger
	for _, m := range mcp {
		l, ok := sessions[m.Session]
		if !ok {
			continue
		}
		var kids []*platform.Process
		for i := range snap.Procs {
			q := &snap.Procs[i]
			if q.PPID != l.s.PID || q.Zombie() {
				continue
			}
			if v, _ := snap.Getenv(q, EnvSessionID); v == m.Session && snap.UID(q) == uid {
				kids = append(kids, q)
			}
		}
		var runs []ledger.Run
		src := ""
		for _, lg := range m.Logs {
			if r := supersededIn(lg, m, kids, l, snap); len(r) > 0 {
				runs = append(runs, r...)
				if src == "" {
					src = lg.File
				}
			}
		}
		if len(runs) > 0 {
			out = append(out, &ledger.Ledger{Version: ledger.Version, Source: src, Speaker: uid, Owner: l.owner, Runs: runs})
		}
	}
	return out
}

// supersededIn is what one server's log proves among kids, the live
// claude's children of that session.
func supersededIn(lg ServerLog, m SessionMCP, kids []*platform.Process, l live, snap *platform.Snapshot) []ledger.Run {
	var starts []int64
	var stopped []bool // stopped[k]: a stop after start k, before start k+1
	for _, e := range lg.Events {
		switch {
		case !e.Stop:
			starts, stopped = append(starts, e.At), append(stopped, false)
		case len(starts) > 0:
			stopped[len(stopped)-1] = true
		}
	}
	if len(starts) < 2 {
		return nil
	}
	last := time.UnixMilli(starts[len(starts)-1])
	if snap.Taken.Sub(last) < supersedeHold {
		return nil
	}
	var mine, all []scan.Server
	for _, e := range m.Entries {
		s := scan.Server{Name: e.Name, Command: e.Command, Args: e.Args, File: e.File}
		all = append(all, s)
		if logName(e.Name) == lg.Server {
			mine = append(mine, s)
		}
	}
	matches := func(q *platform.Process, list []scan.Server) *scan.Server {
		argv := snap.Cmdline(q)
		for k := range list {
			if list[k].Matches(argv) {
				return &list[k]
			}
		}
		return nil
	}
	near := func(at time.Time, ok func(q *platform.Process) bool) []*platform.Process {
		var out []*platform.Process
		for _, q := range kids {
			if st := snap.Started(q); !st.Before(at.Add(-startBefore)) && !st.After(at.Add(startAfter)) && ok(q) {
				out = append(out, q)
			}
		}
		return out
	}
	newest := near(last, func(q *platform.Process) bool { return matches(q, mine) != nil })
	if len(newest) != 1 {
		return nil // no one copy that is the current entry: nothing is shown replaced
	}
	cur := matches(newest[0], mine)
	var runs []ledger.Run
	for k := 0; k < len(starts)-1; k++ {
		if stopped[k] {
			continue
		}
		at := time.UnixMilli(starts[k])
		old := near(at, func(q *platform.Process) bool {
			return q.StartTicks < newest[0].StartTicks && matches(q, all) == nil
		})
		if len(old) != 1 {
			continue // none, or more than one it could be: not this one's to say
		}
		q := old[0]
		runs = append(runs, ledger.Run{ID: fmt.Sprintf("MCP server %s of claude session %s", lg.Server, m.Session), Kind: ledger.KindMCP,
			PID: q.PID, Start: snap.Identity(q), State: ledger.RunRunning,
			Superseded: fmt.Sprintf("superseded: claude pid %d started %q at %s and again at %s (pid %d, its current entry in %s) with no stop in between (Claude Code's MCP log %s); this copy, started at %s, is no entry's now",
				l.s.PID, lg.Server, at.UTC().Format(time.TimeOnly), last.UTC().Format(time.TimeOnly), newest[0].PID, cur.File, lg.File, snap.Started(q).UTC().Format(time.TimeOnly))})
	}
	return runs
}

// logName is the name Claude Code gives a server's log folder after
// mcp-logs-: the server's name, each byte that is not a letter, a digit,
// '-' or '_' made '-'.
func logName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}

// checkedMCP are the logs of a read bounded as its reader bounds them
// (Judge trusts no reader).
func checkedMCP(mcp []SessionMCP) []SessionMCP {
	if len(mcp) > maxTranscripts {
		return nil
	}
	var out []SessionMCP
	for _, m := range mcp {
		if statedir.CheckID("session", m.Session) != "" || len(m.Entries) > maxEntries || len(m.Logs) > maxLogServers {
			continue
		}
		ok := true
		for _, l := range m.Logs {
			ok = ok && len(l.Events) <= maxEvents && statedir.CheckID("server", l.Server) == ""
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}
