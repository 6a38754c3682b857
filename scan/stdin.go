package scan

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

// maxSearch bounds the processes whose fds one scan reads to find who
// writes to the open stdins of its findings.
const maxSearch = 256

// ApplyStdin asks, of each finding whose root's stdin is a pipe or a
// socket, whether anyone can still write to it — the stdin peer, which
// tells a stdio server in use from one left behind, for any client:
//
//   - The kernel says no process can write to it any more (the last
//     writer closed it, or shut its socket for writing): the root can
//     never be spoken to again. The finding gains the reason abandoned.
//   - Otherwise its stdin is open, and ResolveInUse, asked of the findings
//     a rule takes (or a person asks about), looks for the writer: a live
//     process outside the tree makes a reparented root in use by it — no
//     finding (a client that lost a server's npm exec wrapper may keep the
//     server's pipes and keep using it). A run its owner's ledger calls
//     done or ended is the owner's word, and the owner holding its stdin
//     is no news. A writer inside the tree, or none found, is no claim;
//     the evidence says which.
//
// The writers are looked for, in one bounded pass, among the processes of
// the roots' sessions and users (a client and its servers share the
// session it was started in). A peer found in the kernel's tables is a
// kernel fact, not a user's claim.
func (r *Result) ApplyStdin() {
	s := r.Tree.Snap
	if s.Self == 0 || len(r.Findings) == 0 {
		return // a fixture has no fds
	}
	sts := r.readStdins()
	for k := range r.Findings {
		f, st := &r.Findings[k], sts[k]
		switch {
		case st.Kind == "":
		case st.Asked && st.Closed:
			r.judgeStdin(f, st, nil, 0)
		default:
			if r.openStdin == nil {
				r.openStdin = map[int]platform.Stdin{}
			}
			r.openStdin[f.Root.PID] = st
		}
	}
}

// ResolveAllInUse is ResolveInUse for every finding.
func (r *Result) ResolveAllInUse() {
	roots := make([]int, len(r.Findings))
	for k := range r.Findings {
		roots[k] = r.Findings[k].Root.PID
	}
	r.ResolveInUse(roots)
}

// ResolveInUse looks for who can write to the open stdin of the findings
// rooted at roots (none: nothing to do), in one bounded pass, and records
// which are in use (InUse). It is asked of the findings a rule matches (a
// plan), or that a person asks about (explain, scan --all): looking
// through fd tables for a tree nothing will report or signal is work for
// nothing. Each finding is resolved once; the others' evidence says what
// was found.
func (r *Result) ResolveInUse(roots []int) {
	s := r.Tree.Snap
	if len(r.openStdin) == 0 || len(roots) == 0 {
		return
	}
	asked := make(map[int]bool, len(roots))
	for _, pid := range roots {
		asked[pid] = true
	}
	// The findings to resolve, each with its stdin: two roots may share
	// one (servers spawned with the same inherited pipe).
	type pending struct {
		f  *Finding
		st platform.Stdin
	}
	var todo []pending
	var search []platform.Stdin
	uids, sessions := map[uint32]bool{}, map[int]bool{}
	for k := range r.Findings {
		f := &r.Findings[k]
		st, ok := r.openStdin[f.Root.PID]
		if !ok || !asked[f.Root.PID] {
			continue
		}
		delete(r.openStdin, f.Root.PID)
		todo = append(todo, pending{f, st})
		search = append(search, st)
		uids[s.UID(f.Root)] = true
		sessions[f.Root.SID] = true
	}
	if len(todo) == 0 {
		return
	}
	// The processes of a root's session and user: a client and the
	// servers it spawned share the session the user started it in, and a
	// server's npm exec wrapper makes none. At most maxSearch of them, so
	// that a table of orphans whose writers are elsewhere (a daemon's
	// children) costs a bounded pass, not one over every process's fds.
	var near []*platform.Process
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.PID != s.Self && sessions[p.SID] && uids[s.UID(p)] && !p.Zombie() {
			near = append(near, p)
		}
	}
	cut := 0
	if len(near) > maxSearch {
		cut = len(near) - maxSearch
		near = near[:maxSearch]
	}
	writers, unread := s.StdinWriters(search, near, func(w map[uint64][]platform.Writer) bool {
		for _, t := range todo {
			if !slices.ContainsFunc(w[t.st.Inode], func(x platform.Writer) bool { return r.writesFor(t.f, x) }) {
				return false
			}
		}
		return true
	})
	if r.inUse == nil {
		r.inUse = map[int]string{}
	}
	for _, t := range todo {
		if why, used := r.judgeStdin(t.f, t.st, writers[t.st.Inode], unread+cut); used {
			r.inUse[t.f.Root.PID] = why
		}
	}
}

// writesFor reports whether w, a writer of f's root's stdin, is one that
// makes the root in use: outside its tree, and of the root's user (or
// root's) — another user's process never spares a user's tree.
func (r *Result) writesFor(f *Finding, w platform.Writer) bool {
	if f.holds(w.PID) {
		return false
	}
	s := r.Tree.Snap
	p := s.Get(w.PID)
	if p == nil {
		return false
	}
	u := s.UID(p)
	return u == s.UID(f.Root) || u == 0
}

// judgeStdin adds to f what its root's stdin st says, given the writers
// found; it reports whether a live process outside the tree uses it, and
// says so.
func (r *Result) judgeStdin(f *Finding, st platform.Stdin, writers []platform.Writer, unread int) (string, bool) {
	if st.Kind == "" {
		return "", false
	}
	s := r.Tree.Snap
	what := fmt.Sprintf("stdin %s:[%d]", st.Kind, st.Inode)
	if st.Asked && st.Closed {
		f.Reasons = append(f.Reasons, Abandoned)
		f.RootSpeaks = true // the kernel's word about the root's own process
		f.Evidence = append(f.Evidence, what+": no process can write to it any more (the kernel's poll: its last writer closed it or shut it for writing)")
		return "", false
	}
	var inside []int
	for _, w := range writers {
		if f.holds(w.PID) {
			inside = append(inside, w.PID)
			continue
		}
		if r.writesFor(f, w) && f.Has(Reparented) && !f.Has(RunDone) && !f.Has(SessionEnded) {
			return fmt.Sprintf("in use: pid %d (%s) can write to its %s (fd %d)", w.PID, clip(s.CommandLine(s.Get(w.PID)), 80), what, w.FD), true
		}
	}
	switch {
	case len(inside) > 0:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: written to only from inside its tree (pid %d)", what, inside[0]))
	case !st.Asked:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: no writer found in its session, and the kernel could not be asked (no ptrace access): a hint, not proof", what))
	case unread > 0:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: open; its writer is not among the processes of its session whose fds were read (%d were not)", what, unread))
	default:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: open; its writer is not in its session (another session's, user's or namespace's)", what))
	}
	return "", false
}

// readStdins reads every finding's root's stdin, on as many threads as
// the table's prefetch uses: each asking the kernel costs a readlink and
// six syscalls (about 15 µs here), and a table of a thousand abandoned
// servers is no reason for a slow pass.
func (r *Result) readStdins() []platform.Stdin {
	s := r.Tree.Snap
	sts := make([]platform.Stdin, len(r.Findings))
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(r.Findings)/32))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(r.Findings); k += workers {
				if st, err := s.ReadStdin(r.Findings[k].Root); err == nil {
					sts[k] = st
				}
			}
		}()
	}
	wg.Wait()
	return sts
}

// InUse says whether pid roots a reparented tree a live process outside it
// can still write to the stdin of, and why.
func (r *Result) InUse(pid int) (string, bool) {
	why, ok := r.inUse[pid]
	return why, ok
}

// holds reports whether pid is a member of f.
func (f *Finding) holds(pid int) bool {
	for _, m := range f.Members {
		if m.Proc.PID == pid {
			return true
		}
	}
	return false
}
