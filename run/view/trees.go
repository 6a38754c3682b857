package view

import (
	"strings"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// node is one process of a session's tree and its depth below the
// session's process.
type node struct {
	p     *platform.Process
	depth int
}

// walk lists the tree of the session process pid in pre-order, down to
// the next session (a client started in another's shell is its own).
func (b *psBuild) walk(pid int) []node {
	var out []node
	var visit func(i, depth int)
	visit = func(i, depth int) {
		p := &b.s.Procs[i]
		if p.KernelThread() {
			return
		}
		if _, other := b.anchor[p.PID]; other && depth > 0 {
			return
		}
		out = append(out, node{p, depth})
		if depth < 64 {
			for _, c := range b.res.Tree.Children(i) {
				visit(int(c), depth+1)
			}
		}
	}
	visit(b.s.Index(pid), 0)
	return out
}

// tree fills a live session from its tree: its processes, the findings
// among them marked, and their sums.
func (b *psBuild) tree(sess *audit.PSSession, tree []node) {
	s := b.s
	root := s.Get(sess.PID)
	if v := b.version(root); v != "" {
		sess.Version = v // the process's own word over its record's
	}
	sess.UID, sess.User = b.user(root)
	sess.State = state(root)
	if sess.Kind == "bg" || strings.HasPrefix(sess.Kind, "bg ") {
		// A background agent's job (Claude Code's --bg): its record says
		// so, whatever terminal its pty host holds.
		sess.State = "background"
	}
	sess.AgeSeconds = int64(s.Age(root).Seconds())
	for _, n := range tree {
		pr := b.process(n.p, n.depth)
		if k, ok := b.rootOf[n.p.PID]; ok && n.depth > 0 {
			b.held[k] = true
			sess.Leaks++
			pr.Leak = reasons(b.p.Plan.Items[k].Finding)
		}
		sess.Processes = append(sess.Processes, pr)
		sess.MemoryBytes += pr.MemoryBytes
		sess.CPUSeconds += pr.CPUSeconds
	}
}

// process is p as a view shows it.
func (b *psBuild) process(p *platform.Process, depth int) audit.PSProcess {
	s := b.s
	pr := audit.PSProcess{PID: p.PID, PPID: p.PPID, Depth: depth, State: string(rune(p.State)), AgeSeconds: int64(s.Age(p).Seconds()),
		CPUSeconds: float64(p.UTime+p.STime) / float64(max(s.ClockTicks, 1)), Cmdline: audit.CommandLine(s, p)}
	if p.State == 0 {
		pr.State = "?"
	}
	pr.MemoryBytes = p.RSS
	if pss, ok := b.pssOf[p.PID]; ok {
		pr.MemoryBytes, pr.PSS = pss, true
	} else if p.RSS > 0 {
		b.pss = false
	}
	_, titled := b.titled(p)
	if _, anchor := b.anchor[p.PID]; titled || anchor || depth == 0 {
		pr.Kind = "client"
	} else {
		pr.Kind, pr.Name = b.kind(p)
		pr.Name = audit.UserText(pr.Name, audit.MaxName) // a config's, a user's own words
	}
	return pr
}

// kind is what p is: the scan's classes, and a server a client's config
// declares (its user's config speaking for its user's process), with the
// name the config gives it — an MCP server the scan knows by its command
// line is named too.
func (b *psBuild) kind(p *platform.Process) (string, string) {
	k := b.cfg.Classify(b.s, p)
	if k != scan.KindOther && k != scan.KindMCP {
		return string(k), ""
	}
	words := scan.Words(b.s.Cmdline(p))
	if len(words) == 0 {
		return string(k), ""
	}
	for i := range b.p.Evidence.Servers {
		m := &b.p.Evidence.Servers[i]
		if m.MatchesWords(words) {
			if uid := b.s.UID(p); m.UID == uid || m.UID == 0 {
				return string(scan.KindMCP), m.Name
			}
		}
	}
	return string(k), ""
}

// user is p's uid and name.
func (b *psBuild) user(p *platform.Process) (int64, string) {
	uid := b.s.UID(p)
	if uid == platform.NoUID {
		return -1, ""
	}
	return int64(uid), policy.UserName(uid)
}

// state says how a live client runs: in its terminal's foreground, on a
// terminal behind another group, or with none.
func state(p *platform.Process) string {
	switch {
	case p.TTY == 0:
		return "headless"
	case p.TPGID > 0 && int(p.TPGID) != p.PGID:
		return "background"
	}
	return "live"
}

func reasons(f *scan.Finding) []string {
	out := make([]string, len(f.Reasons))
	for i, r := range f.Reasons {
		out[i] = string(r)
	}
	return out
}
