package reap

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
)

// units are the cgroups a tree's last step killed as a whole, and the
// processes each write covered.
type units struct {
	paths   []string
	covered map[int]bool
}

func (u *units) covers(pid int) bool { return u != nil && u.covered[pid] }

// killUnits does the last step as a unit where it can: the tree's
// confinement first (everything the tree is and forked since it was
// moved), then the cgroups the tree owns among those of the survivors that
// were not moved (killCgroups).
func (t *tree) killUnits(left []*kill.Handle) (*units, string) {
	u := &units{covered: map[int]bool{}}
	var notes []string
	if t.conf != nil {
		targets, err := t.conf.Kill()
		if err != nil {
			_, unit := kill.UnitKill()
			notes = append(notes, fmt.Sprintf("%s %s not killed as a unit (%v): per-pid SIGKILL", unit, t.conf.Path, err))
		} else {
			u.paths = append(u.paths, t.conf.Path)
			t.unitEvents(u, targets, t.conf.Path)
			notes = append(notes, unitNote(true, len(targets), len(left) == 0))
		}
	}
	var rest []*kill.Handle
	for _, h := range left {
		if !u.covers(h.PID) && (t.conf == nil || !t.conf.Moved(h.PID) || len(u.paths) == 0) {
			rest = append(rest, h)
		}
	}
	more, note := t.killCgroups(rest)
	if more != nil {
		u.paths = append(u.paths, more.paths...)
		for pid := range more.covered {
			u.covered[pid] = true
		}
	}
	return u, joinNotes(append(notes, note)...)
}

// unitEvents records the processes one cgroup.kill covered.
func (t *tree) unitEvents(u *units, targets []kill.Target, path string) {
	now := time.Now().UTC()
	call, _ := kill.UnitKill()
	for _, tg := range targets {
		u.covered[tg.PID] = true
		p := platform.Process{PID: tg.PID, StartTicks: tg.StartTicks}
		t.emit(Event{Time: now, RootPID: t.root, PID: tg.PID, Start: t.snap.Identity(&p),
			Signal: "SIGKILL", Via: call + " " + path, Result: "ok"})
	}
	if len(targets) > 0 {
		t.delivered = true
	}
}

// killCgroups does the last step through cgroup.kill where the tree owns
// the cgroups its survivors are in (docs/safety.md): the kernel kills a cgroup
// atomically, forks included. The seam proves ownership — every process
// the cgroup holds is a member or a live member's descendant — and refuses
// otherwise; the survivors of a refused cgroup get per-pid SIGKILL, and the
// note says why. Processes in the root cgroup, or on a host without
// cgroup v2, take the per-pid path silently.
func (t *tree) killCgroups(left []*kill.Handle) (*units, string) {
	if len(left) == 0 {
		return nil, ""
	}
	var paths []string
	for _, h := range left {
		if p, err := h.Cgroup(); err == nil && p != "/" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	u := &units{covered: map[int]bool{}}
	var notes []string
	for _, path := range paths {
		if slices.ContainsFunc(u.paths, func(done string) bool { return strings.HasPrefix(path, done+"/") }) {
			continue // killed with its ancestor
		}
		targets, err := t.opt.killCgroup(t.opt.Guard, path, t.handles)
		switch {
		case err == nil:
		case errors.Is(err, platform.ErrGone), errors.Is(err, errors.ErrUnsupported):
			continue
		default:
			notes = append(notes, fmt.Sprintf("cgroup %s not killed as a unit (%v): per-pid SIGKILL", path, err))
			continue
		}
		u.paths = append(u.paths, path)
		t.unitEvents(u, targets, path)
		notes = append(notes, unitNote(false, len(targets), len(left) == 0))
	}
	return u, strings.Join(notes, "; ")
}

// populated waits up to d for every killed cgroup to hold no live process,
// and returns those that still do: cgroup.kill is confirmed like a signal.
func (u *units) populated(d time.Duration) []string {
	if u == nil {
		return nil
	}
	deadline := time.Now().Add(d)
	for {
		var still []string
		for _, path := range u.paths {
			if busy, err := kill.CgroupPopulated(path); err == nil && busy {
				still = append(still, path)
			}
		}
		if len(still) == 0 || time.Now().After(deadline) {
			return still
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unitNote says what a cgroup.kill did — how many processes it ended, or
// that the tree had already left the cgroup (ended: every member had
// exited on SIGTERM, before the last step) — in words: which cgroup is in
// the report's JSON (cgroups) and the audit log's signal records.
func unitNote(confinement bool, n int, ended bool) string {
	what := "a cgroup the tree owned"
	if confinement {
		what = "its confinement"
	}
	switch {
	case n == 0 && ended:
		return "it ended on SIGTERM; " + what + " was empty at the last step"
	case n == 0:
		return what + " was empty when killed: the tree had already gone"
	}
	return fmt.Sprintf("%s killed as a unit (cgroup.kill, %s)", what, plural(n, "process", "processes"))
}

// plural is n with the word for one or for many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
