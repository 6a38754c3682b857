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
type serverSets struct {
	servers *serverIndex
	// sessions are the clients' records of their sessions: a client that
	// keeps several open in one process (an earlier session left open
	// beside a new one) runs a set for each.
	sessions []Session
}

// open is the sessions the clients' own records keep open in p, in the
// word of p's user (or root's), and the records, in words.
func (a serverSets) open(s *platform.Snapshot, p *platform.Process, uid uint32) (int, []string) {
	ids := map[string]bool{}
	var proofs []string
	for _, rec := range a.sessions {
		o := rec.Owner
		if o.PID != p.PID || o.Gone != "" || rec.ID == "" || ids[rec.ID] || rec.Speaker != uid && rec.Speaker != 0 {
			continue
		}
		if gone, _ := OwnerGone(s, RecordedBy(rec.Speaker, o.PID, o.Start)); gone {
			continue
		}
		ids[rec.ID] = true
		proofs = append(proofs, rec.Proof)
	}
	sort.Strings(proofs)
	return len(ids), proofs
}

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
		head := fmt.Sprintf("%s pid %d (%s) runs %d sets of its MCP servers: %s; %s beyond one set, %.0f MiB with what they run",
			owner, p.PID, clip(cmd, 80), sets, strings.Join(each, ", "), copiesOf(extra), float64(mem)/(1<<20))
		open, proofs := a.open(s, p, uid)
		if open >= sets {
			// As many sessions as sets, by the client's own records: a set
			// a session, as the client means it — not a leak.
			out = append(out, Advice{ID: "mcp-server-sets", Severity: "info",
				Evidence: fmt.Sprintf("%s. Its own records keep %d sessions open in it (%s): a set for each open session, as the client means it (a client that keeps an earlier session open beside a new one runs a set for each), not ended threads'",
					head, open, clipList(proofs, 3)),
				Setting: "nothing to reap: end the sessions you no longer need in the client, or restart it, to free the memory"})
			continue
		}
		why := "sets beyond the first are likely ended threads' or tasks', left running under a client that lives"
		if open >= 2 {
			why = fmt.Sprintf("its own records keep %d sessions open in it (%s), and the sets beyond those are likely ended threads' or tasks', left running under a client that lives", open, clipList(proofs, 3))
		}
		out = append(out, Advice{ID: "mcp-server-sets", Severity: "info",
			Evidence: head + ". The MCP specification (2026-07-28) says a client SHOULD NOT tie a stdio server's lifetime to a task, thread or conversation: " + why,
			Setting:  "reaper signals nothing under a live client on this evidence (which set is whose is not shown): close the client's idle threads or sessions, or restart it; `reaper evidence` gathers what to attach to the client's bug report"})
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

// clipList joins the first n of items, saying how many more there are.
func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

func copiesOf(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}
