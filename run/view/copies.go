package view

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// copies groups the servers several live sessions each run a copy of
// (audit.ServerCopies): in each live session's tree, every MCP server
// below the client with no server above it (a launcher's child, such as
// npx's node, is part of its copy), keyed by its user and its command
// line. A server only one session runs, however many copies, is the
// server-set advice's (scan/sets.go), not this.
func (b *psBuild) copies(sessions []audit.PSSession) []audit.ServerCopies {
	type group struct {
		d        audit.ServerCopies
		sessions map[int]bool
		remote   map[string]string // client title → how it registers a server by URL
	}
	groups := map[string]*group{}
	var keys []string
	for _, s := range sessions {
		if s.State == "ended" {
			continue
		}
		procs := s.Processes
		for i := 1; i < len(procs); i++ {
			p := procs[i]
			if p.Kind != "mcp" || underServer(procs, i) {
				continue
			}
			key := fmt.Sprintf("%d\x00%s", s.UID, p.Cmdline)
			g := groups[key]
			if g == nil {
				g = &group{d: audit.ServerCopies{Command: p.Cmdline, UID: s.UID, User: s.User, Clients: []string{}, Sessions: []int{}, PIDs: []int{}},
					sessions: map[int]bool{}, remote: map[string]string{}}
				groups[key] = g
				keys = append(keys, key)
			}
			g.d.Copies++
			g.d.PIDs = append(g.d.PIDs, p.PID)
			g.d.MemoryBytes += subtreeBytes(procs, i)
			if g.d.Name == "" {
				g.d.Name = p.Name
			}
			if !g.sessions[s.PID] {
				g.sessions[s.PID] = true
				g.d.Sessions = append(g.d.Sessions, s.PID)
			}
			if !slices.Contains(g.d.Clients, s.Client) {
				g.d.Clients = append(g.d.Clients, s.Client)
				g.remote[s.Title] = b.client("info:" + s.Client).remote
			}
		}
	}
	out := []audit.ServerCopies{}
	for _, key := range keys {
		g := groups[key]
		if len(g.sessions) < 2 {
			continue
		}
		sort.Ints(g.d.PIDs)
		sort.Ints(g.d.Sessions)
		sort.Strings(g.d.Clients)
		g.d.Advice = copiesAdvice(g.d, g.remote)
		out = append(out, g.d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].MemoryBytes != out[j].MemoryBytes {
			return out[i].MemoryBytes > out[j].MemoryBytes
		}
		return out[i].Command < out[j].Command
	})
	return out
}

// underServer reports whether procs[i] has an MCP server among its
// ancestors in the session's tree (procs is in pre-order with depths).
func underServer(procs []audit.PSProcess, i int) bool {
	depth := procs[i].Depth
	for j := i - 1; j > 0 && depth > 1; j-- {
		if procs[j].Depth < depth {
			if procs[j].Kind == "mcp" {
				return true
			}
			depth = procs[j].Depth
		}
	}
	return false
}

// copiesPSS makes each copy's memory PSS, read now for the processes of
// the copies alone (each copy's server and what it runs), where the
// sessions were built with RSS; a process whose PSS cannot be read keeps
// its RSS.
func (b *psBuild) copiesPSS(dups []audit.ServerCopies) {
	if len(dups) == 0 {
		return
	}
	roots := map[int]bool{}
	for _, d := range dups {
		for _, pid := range d.PIDs {
			roots[pid] = true
		}
	}
	// Each copy's subtree, in the sessions' trees: its pids, by root.
	subtree := map[int][]int{}
	var procs []*platform.Process
	for _, sess := range b.sessions {
		ps := sess.Processes
		for i := range ps {
			if !roots[ps[i].PID] {
				continue
			}
			for j := i; j < len(ps) && (j == i || ps[j].Depth > ps[i].Depth); j++ {
				subtree[ps[i].PID] = append(subtree[ps[i].PID], ps[j].PID)
				if q := b.s.Get(ps[j].PID); q != nil {
					procs = append(procs, q)
				}
			}
		}
	}
	pss := b.s.PSSOf(procs)
	for k := range dups {
		var sum uint64
		for _, root := range dups[k].PIDs {
			for _, pid := range subtree[root] {
				if v, ok := pss[pid]; ok {
					sum += v
				} else if q := b.s.Get(pid); q != nil {
					sum += q.RSS
				}
			}
		}
		dups[k].MemoryBytes = sum
	}
}

// subtreeBytes is the memory of procs[i] and what it runs.
func subtreeBytes(procs []audit.PSProcess, i int) uint64 {
	sum := procs[i].MemoryBytes
	for j := i + 1; j < len(procs) && procs[j].Depth > procs[i].Depth; j++ {
		sum += procs[j].MemoryBytes
	}
	return sum
}

// copiesAdvice is what to do about a server's copies: run it once and
// register it over HTTP, in each client's own words where it has them.
func copiesAdvice(d audit.ServerCopies, remote map[string]string) string {
	name := d.Name
	if name == "" {
		name = "NAME"
	}
	var how []string
	titles := make([]string, 0, len(remote))
	for t := range remote {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	for _, t := range titles {
		if r := remote[t]; r != "" {
			how = append(how, t+": "+strings.ReplaceAll(r, "NAME", name))
		}
	}
	extra := audit.HumanBytes(d.MemoryBytes - d.MemoryBytes/uint64(max(d.Copies, 1)))
	if len(how) == 0 {
		return fmt.Sprintf("each session starts its own copy; %s extra. reaper knows no way for %s to take a server by URL: the copies stay while the sessions do",
			extra, strings.Join(titles, ", "))
	}
	return fmt.Sprintf("each session starts its own copy; %s extra. Run it once (an HTTP server, or behind a stdio-to-HTTP bridge) and register it over HTTP — %s",
		extra, strings.Join(how, "; "))
}
