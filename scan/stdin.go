package scan

import (
	"fmt"
	"slices"

	"github.com/orphanreaper/reaper/platform"
)

// ApplyStdin asks, of each finding whose root's stdin is a pipe or a
// socket, whether anyone can still write to it — the stdin peer, which
// tells a stdio server in use from one left behind, for any client:
//
//   - The kernel says no process can write to it any more (the last
//     writer closed it, or shut its socket for writing): the root can
//     never be spoken to again. The finding gains the reason abandoned.
//   - A live process outside the tree holds the write end: the root is in
//     use by that process, whatever its parent — no finding. (A client
//     that lost a server's npm exec wrapper may keep the server's pipes
//     and keep using it.) Only a reparented root is judged so: a run its
//     owner's ledger calls done or ended is the owner's word, and the
//     owner holding its stdin is no news.
//   - Otherwise (its writer is inside the tree, or in no process reaper
//     could read): no claim; the evidence says which.
//
// The writers are looked for, in one pass, among the processes of the
// roots' users: whose fds a reaper can read (its own uid's, or anyone's
// as root). A peer found in the kernel's tables is a kernel fact, not a
// user's claim.
func (r *Result) ApplyStdin() {
	s := r.Tree.Snap
	if s.Self == 0 || len(r.Findings) == 0 {
		return // a fixture has no fds
	}
	sts := make([]platform.Stdin, len(r.Findings))
	var search []platform.Stdin
	open := map[uint64]*Finding{} // stdin inode → the finding whose root it is
	uids, sessions := map[uint32]bool{}, map[int]bool{}
	for k := range r.Findings {
		f := &r.Findings[k]
		st, err := s.ReadStdin(f.Root)
		if err != nil || st.Kind == "" {
			continue
		}
		sts[k] = st
		if st.Asked && st.Closed {
			continue
		}
		search = append(search, st)
		open[st.Inode] = f
		uids[s.UID(f.Root)] = true
		sessions[f.Root.SID] = true
	}
	var writers map[uint64][]platform.Writer
	unread := 0
	if len(search) > 0 {
		// The roots' users' processes, those in a root's session first:
		// a client and the servers it spawned share the session the user
		// started it in. The search ends once every open stdin has a
		// writer outside its tree.
		var near, far []*platform.Process
		for i := range s.Procs {
			p := &s.Procs[i]
			switch {
			case p.PID == s.Self || !uids[s.UID(p)]:
			case sessions[p.SID]:
				near = append(near, p)
			default:
				far = append(far, p)
			}
		}
		writers, unread = s.StdinWriters(search, append(near, far...), func(w map[uint64][]platform.Writer) bool {
			for ino, f := range open {
				if !slices.ContainsFunc(w[ino], func(x platform.Writer) bool { return !f.holds(x.PID) }) {
					return false
				}
			}
			return true
		})
	}
	if r.inUse == nil {
		r.inUse = map[int]string{}
	}
	kept := r.Findings[:0]
	for k := range r.Findings {
		f := r.Findings[k]
		if why, used := r.judgeStdin(&f, sts[k], writers[sts[k].Inode], unread); used {
			r.inUse[f.Root.PID] = why
			continue
		}
		kept = append(kept, f)
	}
	clear(r.Findings[len(kept):])
	r.Findings = kept
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
		f.spoken(s.UID(f.Root)) // the kernel's word about the root's own process
		f.Evidence = append(f.Evidence, what+": no process can write to it any more (the kernel's poll: its last writer closed it or shut it for writing)")
		return "", false
	}
	var inside []int
	for _, w := range writers {
		if f.holds(w.PID) {
			inside = append(inside, w.PID)
			continue
		}
		if f.Has(Reparented) && !f.Has(RunDone) && !f.Has(SessionEnded) {
			return fmt.Sprintf("in use: pid %d (%s) can write to its %s (fd %d)", w.PID, clip(s.CommandLine(s.Get(w.PID)), 80), what, w.FD), true
		}
	}
	switch {
	case len(inside) > 0:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: written to only from inside its tree (pid %d)", what, inside[0]))
	case !st.Asked:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: no writer found among its user's processes, but the kernel could not be asked (no ptrace access): a hint, not proof", what))
	case unread > 0:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: open; its writer is not among the processes whose fds could be read (%d could not be)", what, unread))
	default:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: open; its writer is not among its user's processes (another user's, or another namespace's)", what))
	}
	return "", false
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
