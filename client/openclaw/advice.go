package openclaw

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// adviser is what one state dir says, for advice on its live gateway: the
// gateway its lock names, the stdio MCP servers its config names, how many
// sessions live (-1: unknown), and its live codex app-servers.
type adviser struct {
	Dir          string
	Gateway      *Gateway
	Servers      []MCPServer
	LiveSessions int
	Codex        []CodexAppServer
}

// Advise is the advice on the state dir's gateway while it lives: its MCP
// server pools against its live sessions (2026.9 keeps one stdio server,
// with its relay and anchor, per session, for the session's whole life
// unless mcp.sessionIdleTtlMs is set), the exec trees of ended sessions
// found under it, trees it holds many identical copies of, and the MCP
// servers its codex app-servers keep for ended threads.
//
// sample, when not nil, is asked once for every MCP server and its anchor,
// so the advice can tell the pools in use from the idle ones.
func (st *adviser) Advise(r *scan.Result, sample scan.Sampler) []scan.Advice {
	if st.Gateway == nil {
		return nil
	}
	gw := r.Running(st.Gateway.Owner, uint32(st.Gateway.UID))
	if gw < 0 {
		return nil
	}
	var out []scan.Advice
	out = append(out, st.mcp(r, gw, sample)...)
	out = append(out, st.ended(r, gw)...)
	out = append(out, st.identical(r, gw)...)
	out = append(out, st.codex(r, gw)...)
	return out
}

// identicalTrees is how many identical trees under one live gateway make
// an advice: a model looping on exec left 170 in the field.
const identicalTrees = 10

// pool is one stdio MCP server a gateway runs, with its supervisors.
type pool struct {
	server string
	pids   []int
	rss    uint64
	probe  []*platform.Process // the server and its anchor, for activity
}

// adviseMCP counts the gateway's MCP pools by configured server.
func (st *adviser) mcp(r *scan.Result, gw int, sample scan.Sampler) (out []scan.Advice) {
	if len(st.Servers) == 0 {
		return out
	}
	s := r.Tree.Snap
	var pools []pool
	codex := map[int]bool{} // the codex app-servers: their servers are adviseCodex's
	for _, as := range st.Codex {
		codex[as.PID] = true
	}
	r.Tree.Walk(gw, func(i, _ int) {
		p := &s.Procs[i]
		if p.Zombie() || i == gw || r.Tree.UnderAny(i, codex) {
			return
		}
		argv := s.Cmdline(p)
		for k := range st.Servers {
			if !st.Servers[k].Matches(argv) {
				continue
			}
			pl := pool{server: st.Servers[k].Name, probe: []*platform.Process{p}}
			r.Tree.Walk(i, func(j, _ int) {
				pl.pids = append(pl.pids, s.Procs[j].PID)
				pl.rss += s.Procs[j].RSS
			})
			// Its anchor and relay, OpenClaw's per-server supervisors.
			for j, steps := r.Tree.Parent(i), 0; j >= 0 && j != gw && steps < 2; j, steps = r.Tree.Parent(j), steps+1 {
				if SupervisorRole(s.CommandLine(&s.Procs[j])) == "" || strings.Contains(s.CommandLine(&s.Procs[j]), "spawn-broker") {
					break
				}
				pl.pids = append(pl.pids, s.Procs[j].PID)
				pl.rss += s.Procs[j].RSS
				if strings.Contains(s.CommandLine(&s.Procs[j]), "group-anchor") {
					pl.probe = append(pl.probe, &s.Procs[j])
				}
			}
			pools = append(pools, pl)
			return
		}
	})
	if len(pools) == 0 {
		return out
	}
	byServer := map[string]int{}
	var rss uint64
	for _, pl := range pools {
		byServer[pl.server]++
		rss += pl.rss
	}
	names := make([]string, 0, len(byServer))
	for n := range byServer {
		names = append(names, fmt.Sprintf("%s ×%d", n, byServer[n]))
	}
	sort.Strings(names)
	sessions := "an unknown number of live sessions"
	if st.LiveSessions >= 0 {
		sessions = fmt.Sprintf("%d live %s", st.LiveSessions, plural(st.LiveSessions, "session"))
	}
	ttl := st.Servers[0].IdleTTLMs
	severity := "info"
	if st.LiveSessions >= 0 && len(pools) > max(st.LiveSessions, 1) {
		severity = "warning" // more than one per live session: duplicates
	}
	evidence := fmt.Sprintf("gateway pid %d (%s) holds %d stdio MCP %s (%s) for %s, about %s with their relays and anchors",
		st.Gateway.Owner.PID, st.Dir, len(pools), plural(len(pools), "server"), strings.Join(names, ", "), sessions, mib(rss)) + activityNote(pools, sample)
	if ttl > 0 {
		if severity == "warning" {
			out = append(out, scan.Advice{ID: "openclaw-mcp-pools", Severity: severity, Evidence: evidence + fmt.Sprintf("; mcp.sessionIdleTtlMs is %d", ttl),
				Setting: "the servers beyond one per live session outlive their sessions: check " + filepath.Join(st.Dir, "openclaw.json")})
		}
		return out
	}
	out = append(out, scan.Advice{ID: "openclaw-mcp-idle-ttl", Severity: severity,
		Evidence: evidence + "; mcp.sessionIdleTtlMs is 0, so each session keeps its servers for its whole life",
		Setting:  fmt.Sprintf("mcp.sessionIdleTtlMs in %s (for example 600000: a session's MCP servers are retired after 10 idle minutes)", filepath.Join(st.Dir, "openclaw.json"))})
	return out
}

// adviseEnded counts the findings of ended sessions under the gateway.
func (st *adviser) ended(r *scan.Result, gw int) (out []scan.Advice) {
	s := r.Tree.Snap
	var pids []string
	var rss uint64
	for k := range r.Findings {
		f := &r.Findings[k]
		if !f.Has(scan.SessionEnded) || f.Kind == scan.KindMCP || !r.Tree.Under(s.Index(f.Root.PID), gw) {
			// (an MCP server of an ended codex thread: adviseCodex's)
			continue
		}
		pids = append(pids, fmt.Sprint(f.Root.PID))
		rss += f.RSS
	}
	if len(pids) == 0 {
		return out
	}
	out = append(out, scan.Advice{ID: "openclaw-exec-ended", Severity: "warning",
		Evidence: fmt.Sprintf("gateway pid %d (%s) still runs %d %s of deleted or reset sessions (roots %s), about %s: OpenClaw keeps background execs past their session",
			st.Gateway.Owner.PID, st.Dir, len(pids), plural(len(pids), "tree"), strings.Join(pids, ", "), mib(rss)),
		Setting: `a policy rule with when = ["session-ended"], kind = ["exec"], action = "terminate" (the example policy's openclaw-exec-ended, which reports)`})
	return out
}

// adviseIdentical flags a gateway that holds many copies of one tree.
func (st *adviser) identical(r *scan.Result, gw int) (out []scan.Advice) {
	s := r.Tree.Snap
	count := map[string]int{}
	for _, k := range r.Tree.Children(gw) {
		r.Tree.Walk(int(k), func(i, depth int) {
			p := &s.Procs[i]
			if p.Zombie() || SupervisorRole(s.CommandLine(p)) != "" {
				return
			}
			if q := r.Tree.Parent(i); q >= 0 && SupervisorRole(s.CommandLine(&s.Procs[q])) == "" && q != gw {
				return // only a tree's root, below the gateway or its supervisors
			}
			count[s.CommandLine(p)]++
		})
	}
	for cmd, n := range count {
		if n <= identicalTrees {
			continue
		}
		out = append(out, scan.Advice{ID: "openclaw-identical-trees", Severity: "warning",
			Evidence: fmt.Sprintf("gateway pid %d (%s) holds %d identical trees of %q", st.Gateway.Owner.PID, st.Dir, n, clipText(cmd, 120)),
			Setting:  "a model looping on one command: check the agent's sessions (openclaw tasks list); the trees outlive deleted sessions"})
	}
	return out
}

// adviseCodex counts each codex app-server's MCP servers against the
// threads sessions are still bound to: the app-server keeps a thread's
// servers after its session is deleted.
func (st *adviser) codex(r *scan.Result, gw int) (out []scan.Advice) {
	s := r.Tree.Snap
	for _, as := range st.Codex {
		if len(as.Children) <= as.LiveThreads || !r.Tree.Under(s.Index(as.PID), gw) {
			continue
		}
		byServer := map[string]int{}
		var ended, untied []string
		var rss uint64
		for _, ch := range as.Children {
			byServer[ch.Server]++
			if i := s.Index(ch.PID); i >= 0 {
				r.Tree.Walk(i, func(j, _ int) { rss += s.Procs[j].RSS })
			}
			switch {
			case ch.Ended():
				ended = append(ended, fmt.Sprintf("%d (thread %s)", ch.PID, ch.Thread))
			case ch.Thread == "":
				untied = append(untied, fmt.Sprint(ch.PID))
			}
		}
		names := make([]string, 0, len(byServer))
		for n, k := range byServer {
			names = append(names, fmt.Sprintf("%s ×%d", n, k))
		}
		sort.Strings(names)
		evidence := fmt.Sprintf("codex app-server pid %d under gateway pid %d (%s) runs %d MCP servers (%s), about %s, for %d live %s (app-server-thread-bindings)",
			as.PID, st.Gateway.Owner.PID, st.Dir, len(as.Children), strings.Join(names, ", "), mib(rss), as.LiveThreads, plural(as.LiveThreads, "thread"))
		if len(ended) > 0 {
			evidence += fmt.Sprintf("; %d belong to threads no session is bound to any more: %s", len(ended), strings.Join(ended, ", "))
		}
		if len(untied) > 0 {
			evidence += fmt.Sprintf("; %d could not be tied to a thread by start time: %s", len(untied), strings.Join(untied, ", "))
		}
		out = append(out, scan.Advice{ID: "openclaw-codex-mcp-threads", Severity: "warning", Evidence: evidence,
			Setting: `none in OpenClaw 2026.9: the app-server keeps a thread's MCP servers until it exits (a gateway restart ends it). A policy rule with when = ["session-ended"], kind = ["mcp"], action = "terminate" removes those tied to ended threads (the example policy's openclaw-mcp-ended, which reports)`})
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// activityNote says which pools moved bytes or woke up in the sampler's
// window: those are in use; the others idle.
func activityNote(pools []pool, sample scan.Sampler) string {
	if sample == nil {
		return ""
	}
	var procs []*platform.Process
	for _, pl := range pools {
		procs = append(procs, pl.probe...)
	}
	seen := sample(procs)
	var busy, idle []string
	for _, pl := range pools {
		var a scan.Activity
		known := false
		for _, p := range pl.probe {
			if x, ok := seen[p.PID]; ok {
				known = true
				a.Bytes += x.Bytes
				a.Switches += x.Switches
			}
		}
		switch {
		case !known:
		case a.Bytes > 0:
			busy = append(busy, fmt.Sprintf("%d (%d bytes)", pl.probe[0].PID, a.Bytes))
		default:
			idle = append(idle, fmt.Sprint(pl.probe[0].PID))
		}
	}
	return fmt.Sprintf("; in the sampling window %d moved bytes (server pids %s), %d %s idle (%s)",
		len(busy), orNone(busy), len(idle), map[bool]string{true: "was", false: "were"}[len(idle) == 1], orNone(idle))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
