package scan

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// Server sets under a live client. The MCP specification (2026-07-28,
// lifecycle: stdio) says a client SHOULD NOT tie a stdio server's
// lifetime to a task, thread or conversation. Clients that do (a set per
// loaded thread, or per session) pile up sets under a parent that lives on, and nothing of theirs says which
// set is whose. So it is said, never acted on: a live client holding
// more than one copy of a configured server, each old enough not to be a
// connect's short probe (the MCP TypeScript SDK v2 starts one on every
// connect), is named with the count of sets and what the extra copies
// hold in memory.

// setsHold is how old a copy must be to count: an SDK's probe copy or a
// reload's replacement lives for well under it.
const setsHold = 10 * time.Second

// serverSets is the adviser: the servers the clients' configs declare.
type serverSets struct{ servers *serverIndex }

// Advise names each live client process (a command mark with an owner)
// whose children run more than one copy of a declared server of its user.
func (a serverSets) Advise(r *Result, _ Sampler) []Advice {
	if a.servers == nil || len(a.servers.servers) == 0 {
		return nil
	}
	s := r.Tree.Snap
	kids := map[int][]*platform.Process{}
	for i := range s.Procs {
		q := &s.Procs[i]
		if !q.Zombie() && q.PPID > 1 {
			kids[q.PPID] = append(kids[q.PPID], q)
		}
	}
	var out []Advice
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Zombie() || len(kids[p.PID]) < 2 {
			continue
		}
		cmd := s.CommandLine(p)
		client := r.clientOf(cmd)
		if client == nil {
			continue
		}
		owner := client.Owner
		uid := s.UID(p)
		copies := map[string][]*platform.Process{} // server name and file → its copies
		var names []string
		for _, q := range kids[p.PID] {
			if s.Age(q) < setsHold || s.UID(q) != uid {
				continue
			}
			srv := a.servers.match(Words(s.Cmdline(q)), func(m *Server) bool { return m.UID == uid })
			if srv == nil {
				continue
			}
			key := fmt.Sprintf("%q (%s)", srv.Name, srv.File)
			if copies[key] == nil {
				names = append(names, key)
			}
			copies[key] = append(copies[key], q)
		}
		sets, extra := 0, 0
		var mem uint64
		var each []string
		sort.Strings(names)
		for _, key := range names {
			c := copies[key]
			sets = max(sets, len(c))
			if len(c) < 2 {
				continue
			}
			each = append(each, fmt.Sprintf("%d of %s", len(c), key))
			sort.Slice(c, func(i, j int) bool { return c[i].StartTicks < c[j].StartTicks })
			for _, q := range c[:len(c)-1] {
				extra++
				mem += treeRSS(q, kids, 0)
			}
		}
		if sets < 2 {
			continue
		}
		out = append(out, Advice{ID: "mcp-server-sets", Severity: "info",
			Evidence: fmt.Sprintf("%s pid %d (%s) runs %d sets of its MCP servers: %s; %s beyond one set, %.0f MiB with what they run. The MCP specification (2026-07-28) says a client SHOULD NOT tie a stdio server's lifetime to a task, thread or conversation: sets beyond the first are likely ended threads' or tasks', left running under a client that lives",
				owner, p.PID, clip(cmd, 80), sets, strings.Join(each, ", "), copiesOf(extra), float64(mem)/(1<<20)),
			Setting: "reaper signals nothing under a live client on this evidence (which set is whose is not shown): close the client's idle threads or sessions, or restart it; `reaper evidence` gathers what to attach to the client's bug report"})
	}
	return out
}

// treeRSS is the resident memory of q and everything under it, to a depth
// of 64 (a table read over time could show a cycle).
func treeRSS(q *platform.Process, kids map[int][]*platform.Process, depth int) uint64 {
	n := q.RSS
	if depth == 64 {
		return n
	}
	for _, c := range kids[q.PID] {
		n += treeRSS(c, kids, depth+1)
	}
	return n
}

func copiesOf(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}
