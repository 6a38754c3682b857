package scan

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

// maxSearch bounds the processes of one user whose fds one search reads
// to find who writes to the open stdins of that user's findings.
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
	r.applyStdout()
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

// applyStdout asks, of each reparented finding whose root is an agent
// client's own process (a command mark with an owner), whether anyone can
// still read its stdout. A client run headless by a script (`CLIENT -p … | tool`) whose reader died keeps
// running, and spending, with its output going to a pipe no process
// reads: the kernel says so (ReadStdout), and the finding gains the
// reason abandoned. Never one whose output is a file, a terminal, or a
// pipe a live process reads.
func (r *Result) applyStdout() {
	s := r.Tree.Snap
	for k := range r.Findings {
		f := &r.Findings[k]
		if !f.Has(Reparented) || f.Has(Abandoned) {
			continue
		}
		m := r.clientOf(s.CommandLine(f.Root))
		if m == nil {
			continue
		}
		st, err := s.ReadStdout(f.Root)
		if err != nil || !st.Asked || !st.Closed {
			continue
		}
		f.Reasons = append(f.Reasons, Abandoned)
		f.RootSpeaks = true // the kernel's word about the root's own process
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s run headless: its stdout %s:[%d] has no reader any more (the kernel's poll: no process holds its read end), so its output goes nowhere", m.Owner, st.Kind, st.Inode))
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
// rooted at roots (none: nothing to do), and records which are in use
// (InUse) and which could not be resolved (StdinDoubt). It is asked of
// the findings a rule matches (a plan), or that a person asks about
// (explain, scan --all): looking through fd tables for a tree nothing will
// report or signal is work for nothing. Each finding is resolved once; the
// others' evidence says what was found.
//
// The search is made per user: a finding of uid U is in use only by a
// process of U's or root's (writesFor), so those are the only processes
// looked at — U's, then root's, each with a budget of its own (maxSearch
// processes, and platform's bound on links), never one budget a run
// shares. No user's processes can spend the search for another's
// findings. A search that could not read everything it had to (a bound
// reached, fds it may not read) and did not find a writer is doubt: the
// finding is refused for the pass (docs/threat-model.md, "A search that
// did not finish").
func (r *Result) ResolveInUse(roots []int) {
	s := r.Tree.Snap
	if len(r.openStdin) == 0 || len(roots) == 0 {
		return
	}
	asked := make(map[int]bool, len(roots))
	for _, pid := range roots {
		asked[pid] = true
	}
	// The findings to resolve, by their user, each with its stdin: two
	// roots may share one (servers spawned with the same inherited pipe).
	byUser := map[uint32][]pendingStdin{}
	var users []uint32
	for k := range r.Findings {
		f := &r.Findings[k]
		st, ok := r.openStdin[f.Root.PID]
		if !ok || !asked[f.Root.PID] {
			continue
		}
		delete(r.openStdin, f.Root.PID)
		u := s.UID(f.Root)
		if _, seen := byUser[u]; !seen {
			users = append(users, u)
		}
		byUser[u] = append(byUser[u], pendingStdin{f, st})
	}
	// The processes of the roots' sessions, in one pass over the table:
	// each user's search then reads only its own sessions' members, and
	// a thousand users with findings cost one walk, not a thousand.
	members := map[int][]*platform.Process{}
	for _, todo := range byUser {
		for _, t := range todo {
			members[t.f.Root.SID] = nil
		}
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		if _, ok := members[p.SID]; ok && p.PID != s.Self && !p.Zombie() {
			members[p.SID] = append(members[p.SID], p)
		}
	}
	slices.Sort(users)
	for _, u := range users {
		r.resolveUser(u, byUser[u], members)
	}
}

// pendingStdin is a finding whose root's stdin is open, to resolve.
type pendingStdin struct {
	f  *Finding
	st platform.Stdin
}

// resolveUser resolves the open stdins of uid's findings: the writers are
// looked for among the processes of their roots' sessions (a client and
// the servers it spawned share the session the user started it in, and a
// server's npm exec wrapper makes none) that are uid's, then — if any is
// still unresolved — root's, each at most maxSearch processes; members
// are the processes of every root's session, in pid order.
func (r *Result) resolveUser(uid uint32, todo []pendingStdin, members map[int][]*platform.Process) {
	s := r.Tree.Snap
	search := make([]platform.Stdin, len(todo))
	var sessions []int
	seen := map[int]bool{}
	for k, t := range todo {
		search[k] = t.st
		if !seen[t.f.Root.SID] {
			seen[t.f.Root.SID] = true
			sessions = append(sessions, t.f.Root.SID)
		}
	}
	writers := map[uint64][]platform.Writer{}
	// resolved: every finding has a writer that makes it in use, among
	// those found before (writers) and those of the search under way (w).
	resolved := func(w map[uint64][]platform.Writer) bool {
		for _, t := range todo {
			uses := func(x platform.Writer) bool { return r.writesFor(t.f, x) }
			if !slices.ContainsFunc(writers[t.st.Inode], uses) && !slices.ContainsFunc(w[t.st.Inode], uses) {
				return false
			}
		}
		return true
	}
	unread := 0
	owners := []uint32{uid}
	if uid != 0 {
		owners = append(owners, 0)
	}
	for _, owner := range owners {
		var near []*platform.Process
		for _, sid := range sessions {
			for _, p := range members[sid] {
				if s.UID(p) == owner {
					near = append(near, p)
				}
			}
		}
		if len(near) > maxSearch {
			unread += len(near) - maxSearch
			near = near[:maxSearch]
		}
		w, n := s.StdinWriters(search, near, resolved)
		unread += n
		for ino, ws := range w {
			writers[ino] = append(writers[ino], ws...)
		}
		if resolved(nil) {
			break
		}
	}
	if r.inUse == nil {
		r.inUse = map[int]string{}
	}
	for _, t := range todo {
		if why, used := r.judgeStdin(t.f, t.st, writers[t.st.Inode], unread); used {
			r.inUse[t.f.Root.PID] = why
		} else if unread > 0 && t.f.Has(Reparented) && !t.f.Has(RunDone) && !t.f.Has(SessionEnded) {
			if r.stdinDoubt == nil {
				r.stdinDoubt = map[int]string{}
			}
			whose := "root's"
			if uid != 0 {
				whose = "uid " + uidText(uid) + "'s and root's"
			}
			r.stdinDoubt[t.f.Root.PID] = fmt.Sprintf("who writes to its open stdin %s:[%d] is not known: %d of %s processes in its session could not be read whole (a bound, or no access), and a writer there would make it in use — doubt, not a kill, for this pass",
				t.st.Kind, t.st.Inode, unread, whose)
		}
	}
}

// StdinDoubt says whether the search for who writes to the open stdin of
// the tree rooted at pid did not finish, so that the tree may be in use by
// a process it did not read: no signal may reach it this pass.
func (r *Result) StdinDoubt(pid int) (string, bool) {
	why, ok := r.stdinDoubt[pid]
	return why, ok
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
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: open; its writer is not among the processes of its user and root in its session whose fds were read (%d were not, in whole or in part)", what, unread))
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
