package reap

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/scan"
)

// A tree fights back by forking while it dies: a member whose SIGTERM
// handler forks a child and exits leaves that child reparented to PID 1,
// outside every tree a rescan walks. Two ways to hold it:
//
//   - Where the reaper is root on a writable cgroup v2 hierarchy, the
//     stopped tree is moved into a cgroup of its own before SIGTERM
//     (kill.Confinement). Whatever it forks is born inside; the last
//     step is cgroup.kill, confirmed by "populated 0".
//   - Elsewhere (not root, cgroup v1 only, a read-only /sys/fs/cgroup,
//     macOS), the sessions and process groups the tree held whole when it
//     was stopped are followed: a child forked while dying stays in its
//     parent's session and group unless it calls setsid(2) itself. After
//     the kill they are read again; what is found there is admitted by the
//     gate and SIGKILLed, and what still lives is named and the finding is
//     failed, never killed.

// confineTree moves the stopped tree into a confinement of its own where
// the kernel lets the reaper make one, and returns a note for the audit.
func (t *tree) confineTree() string {
	c, err := t.opt.confine(t.opt.Guard, fmt.Sprintf("%d-%d", os.Getpid(), t.root))
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return "" // the session and process-group path; the normal case without root
		}
		return "no confinement (" + err.Error() + "): forks followed by session and process group"
	}
	var notes []string
	moved := 0
	if j := t.opt.Journal; j != nil {
		j.Confining(c.Path)
		c.Moving = func(pid int, start uint64, from string) { j.Moving(c.Path, pid, start, from) }
	}
	for _, h := range t.handles {
		switch err := c.Move(h); {
		case err == nil:
			moved++
		case errors.Is(err, platform.ErrGone):
		default:
			notes = append(notes, fmt.Sprintf("pid %d not moved: %v", h.PID, err))
		}
	}
	if moved == 0 {
		c.Remove()
		return joinNotes(append(notes, "no member could be moved into a confinement: forks followed by session and process group")...)
	}
	t.conf = c
	_, unit := kill.UnitKill()
	return joinNotes(append([]string{fmt.Sprintf("confined in a %s of its own (%s)", unit, plural(moved, "process", "processes"))}, notes...)...)
}

// ownGroups returns the sessions and process groups that only the tree's
// members and their descendants are in, as s (and its tree tr) shows them:
// a child the tree forked since the last rescan is in its parent's group,
// and must not make the group look shared.
func (t *tree) ownGroups(s *platform.Snapshot, tr *scan.Tree) map[int]bool {
	own := map[int]bool{}
	for _, h := range t.handles {
		if p := s.Get(h.PID); p != nil && p.StartTicks == t.starts[h.PID] {
			own[p.SID], own[p.PGID] = true, true
		}
	}
	delete(own, 0)
	delete(own, 1)
	member := t.member
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Zombie() || p.KernelThread() || !own[p.SID] && !own[p.PGID] || member(p) {
			continue
		}
		below := false
		tr.Ancestors(i, func(j int) bool {
			below = member(&s.Procs[j])
			return !below
		})
		if !below {
			own[p.SID], own[p.PGID] = false, false
		}
	}
	for id, whole := range own {
		if !whole {
			delete(own, id)
		}
	}
	return own
}

// escapees looks, once the tree is dead, for what it may have left: the
// processes in the sessions and process groups it held (children it
// forked while dying) — each one the gate admits is SIGKILLed, and one
// that still lives, or that the gate refuses, is named and the finding is
// failed, never called killed. It returns a note, and whether the finding
// failed.
//
// A process is the tree's only when the kernel ties it to the tree: in
// its confinement (whatever it forks is born inside, and cgroup.kill ends
// it), in a session or group the tree held whole, or seen as a member's
// child at a rescan (then it was a member). A process merely adopted by
// the tree's adopter during the reap is not: on a busy host PID 1 adopts
// the host's own processes all the time (a file-transfer shell whose
// parent exited), and naming them failed reaps that had ended their whole
// tree. A fork that leaves every group by setsid(2) outside a
// confinement is the limit of that fallback (docs/threat-model.md).
func (t *tree) escapees() (string, bool) {
	s, err := platform.ReadSnapshot(t.opt.ProcRoot)
	if err != nil {
		return "could not confirm that nothing the tree forked while dying lives: " + err.Error(), true
	}
	defer s.Close()
	var found []*platform.Process
	for i := range s.Procs {
		p := &s.Procs[i]
		if !p.Zombie() && !p.KernelThread() && !t.isApart(p) && (t.groups[p.SID] || t.groups[p.PGID]) {
			found = append(found, p)
		}
	}
	var refused []string
	var opened []*kill.Handle
	for _, p := range found {
		if why := t.admit(s, p); why != "" {
			refused = append(refused, fmt.Sprintf("pid %d (%s): %s", p.PID, s.CommandLine(p), why))
			continue
		}
		n := len(t.handles)
		if _, stop := t.open(s, p); stop || len(t.handles) == n {
			continue
		}
		h := t.handles[n]
		t.send(h, kill.Kill)
		opened = append(opened, h)
	}
	var alive []string
	for _, h := range opened {
		if !h.WaitGone(t.opt.KillWait) {
			alive = append(alive, fmt.Sprintf("pid %d", h.PID))
		}
	}
	alive = append(alive, refused...)
	switch {
	case len(alive) > 0:
		return fmt.Sprintf("partial: %d processes the tree may have forked while dying are alive: %s", len(alive), strings.Join(alive, "; ")), true
	case len(found) > 0:
		return fmt.Sprintf("%d processes the tree forked while dying found in its sessions and process groups and killed", len(found)), false
	}
	return "", false
}

// member reports whether p is a process the tree handled, by pid and start.
func (t *tree) member(p *platform.Process) bool {
	st, ok := t.starts[p.PID]
	return ok && st == p.StartTicks
}

// isApart reports whether p is one of the processes the scan set apart
// from the tree, by pid and start.
func (t *tree) isApart(p *platform.Process) bool {
	st, ok := t.apart[p.PID]
	return ok && st == p.StartTicks
}
