package scan

import "fmt"

// ApplyHeadless finds the clients left headless: a still untracked root
// that is a client's own process (a CommandMark with an Owner), launched
// as a job — it does not lead its process group, and the group is not its
// session's (a shell's job, not a setsid daemon a client shares) — whose
// group leader, what the user typed, is gone, and which its user can no
// longer reach: it has no terminal, or its group is not its terminal's
// foreground. The leader's pid is held by the group while the root lives
// (LeaderMark), so the leader gone is proven. What the client runs goes
// with it: the finding is the tree it heads, owner-dead. Never a client
// the user put in the background (its leader lives), never one in a live
// terminal's foreground, never a daemon leading its own session.
func (r *Result) ApplyHeadless() {
	s := r.Tree.Snap
	for k := range r.Findings {
		f := &r.Findings[k]
		root := f.Root
		pg := root.PGID
		if !f.Has(Untracked) || pg <= 1 || pg == root.PID || pg == root.SID {
			continue
		}
		if q := s.Get(pg); q != nil && !q.Zombie() {
			continue // what launched it lives: its user's to manage
		}
		if root.TTY != 0 && root.TPGID > 0 && int(root.TPGID) == pg {
			continue // the terminal's foreground: its user can reach it
		}
		m := r.clientOf(s.CommandLine(root))
		if m == nil {
			continue
		}
		f.Owner, f.OwnerPID = m.Owner, pg
		f.claimed()
		f.Reasons = append(f.Reasons, OwnerDead)
		f.RootSpeaks = true // the kernel's process table, about the root's own group
		reach := "it has no terminal"
		if root.TTY != 0 {
			reach = "its group is not its terminal's foreground"
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("headless %s: what launched it, the leader of its process group %d, is gone, and %s: its user can no longer reach it", m.Owner, pg, reach))
	}
}

// clientOf is the command mark with an owner — an agent client's own
// process — that the command line cmd matches, or nil.
func (r *Result) clientOf(cmd string) *CommandMark {
	for i := range r.cfg.Marks.Commands {
		if m := &r.cfg.Marks.Commands[i]; m.Owner != "" && m.Cmdline.MatchString(cmd) {
			return m
		}
	}
	return nil
}
