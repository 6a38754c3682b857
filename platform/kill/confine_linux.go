package kill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Confinement is a cgroup v2 the reaper made for one tree it is about to
// kill, so that the tree cannot escape by forking while it dies.
//
// The tree's members are stopped, then moved into it before SIGTERM. From
// then on whatever they fork is born inside: a child starts in its
// parent's cgroup (cgroups(7)), and only a process with write access to
// the cgroup's cgroup.procs — root, since the reaper made it as root with
// mode 0755 — can move a process in. The last step writes cgroup.kill,
// which SIGKILLs every process in the cgroup and its descendants and is
// atomic with respect to forks in flight (Linux 5.14,
// Documentation/admin-guide/cgroup-v2.rst), and "populated 0" in
// cgroup.events confirms that nothing is left.
//
// Every confinement lives under one parent of the reaper's own
// (ConfineParent), below the reaper's own cgroup — under the shipped
// systemd unit, the subtree Delegate=yes hands to it, the only one a
// service may change ("Managers should refrain from making any changes
// to the cgroup tree outside of the subtrees for units they created with
// the Delegate flag turned on", systemd's cgroup delegation doc). A
// reaper SIGKILLed mid-reap, or whose PID namespace ended under it,
// leaves its confinement where every later run in that cgroup looks
// (SweepConfinements); systemd trims a unit's or scope's subtree when it
// stops, and doctor names any left anywhere (Confinements). Nothing is
// moved into the reaper's own cgroup. Moving a member takes it out of its
// unit's cgroup, and with it out of its memory and pids limits, for the
// few seconds it has left.
type Confinement struct {
	// Path is the cgroup's path in the v2 hierarchy.
	Path  string
	dir   string
	guard *Guard
	moved map[int]uint64 // pid → start ticks of what was moved in
	from  map[int]string // pid → the cgroup it was moved from
	first string         // the cgroup the first member came from
	// tainted: a move could not be proved to have moved the member (it
	// died as it was moved): the cgroup is not killed as a unit.
	tainted string
	// Moving, when set, is told each move before it is made, with the
	// cgroup the process comes from: a record for whoever must give the
	// confinement up should the reaper die mid-move (run.StopLog).
	Moving func(pid int, start uint64, from string)
}

func (g *Guard) confine(tag string) (*Confinement, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("confinement needs root: %w", errors.ErrUnsupported)
	}
	if tag == "" || strings.ContainsAny(tag, "/\x00") {
		return nil, fmt.Errorf("confinement tag %q", tag)
	}
	root := Cgroup2Root()
	if root == "" {
		return nil, fmt.Errorf("no cgroup v2 hierarchy: %w", errors.ErrUnsupported)
	}
	parent, err := confineParent()
	if err != nil {
		return nil, fmt.Errorf("the reaper's own cgroup: %v: %w", err, errors.ErrUnsupported)
	}
	if err := os.Mkdir(root+parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
			return nil, fmt.Errorf("cgroup %s: %v: %w", parent, err, errors.ErrUnsupported)
		}
		return nil, fmt.Errorf("make cgroup %s: %w", parent, err)
	}
	path := fmt.Sprintf("%s/%s%s-%d", parent, confinePrefix, tag, time.Now().UnixNano())
	dir := root + path
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
			return nil, fmt.Errorf("cgroup %s: %v: %w", path, err, errors.ErrUnsupported)
		}
		return nil, fmt.Errorf("make cgroup %s: %w", path, err)
	}
	c := &Confinement{Path: path, dir: dir, guard: g, moved: map[int]uint64{}, from: map[int]string{}}
	if _, err := os.Stat(dir + "/cgroup.kill"); err != nil {
		c.Remove()
		return nil, fmt.Errorf("cgroup %s has no cgroup.kill (Linux < 5.14): %w", path, errors.ErrUnsupported)
	}
	return c, nil
}

func (c *Confinement) move(h *Handle) error {
	if err := c.guard.check(h.PID); err != nil {
		return err
	}
	origin, err := h.Cgroup()
	if err != nil {
		return err
	}
	if c.Moving != nil {
		c.Moving(h.PID, h.start, origin)
	}
	err = os.WriteFile(c.dir+"/cgroup.procs", []byte(strconv.Itoa(h.PID)), 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	case err != nil:
		return fmt.Errorf("move pid %d into cgroup %s: %w", h.PID, c.Path, err)
	}
	if h.WaitGone(0) {
		c.tainted = fmt.Sprintf("pid %d exited as it was moved in", h.PID)
		return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	}
	cg, err := h.Cgroup()
	if err != nil {
		c.tainted = fmt.Sprintf("pid %d: cgroup not read after the move: %v", h.PID, err)
		return err
	}
	if cg != c.Path {
		return fmt.Errorf("pid %d is in cgroup %s after the move, not %s", h.PID, cg, c.Path)
	}
	c.moved[h.PID] = h.start
	c.from[h.PID] = origin
	if c.first == "" {
		c.first = origin
	}
	return nil
}

func (c *Confinement) release() error {
	var errs []error
	for _, pid := range c.Procs() {
		to, ok := c.from[pid]
		if !ok {
			to = c.first
		}
		if to == "" {
			continue
		}
		err := os.WriteFile(Cgroup2Root()+to+"/cgroup.procs", []byte(strconv.Itoa(pid)), 0)
		if err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("pid %d back to %s: %w", pid, to, err))
		}
	}
	if !c.Remove() {
		errs = append(errs, fmt.Errorf("cgroup %s not removed", c.Path))
	}
	return errors.Join(errs...)
}

func (c *Confinement) movedOS(pid int) bool {
	_, ok := c.moved[pid]
	return ok
}

func (c *Confinement) kill() ([]Target, error) {
	if c.tainted != "" {
		return nil, &RefusalError{0, "confinement " + c.Path + " not killed as a unit: " + c.tainted}
	}
	pids, err := subtreeProcs(c.dir)
	if errors.Is(err, ErrGone) {
		return nil, nil // removed: a cgroup can be removed only when it holds nothing
	}
	if err != nil {
		return nil, err
	}
	var covered []Target
	for _, pid := range pids {
		if pid <= 0 {
			return nil, &RefusalError{pid, "the confinement holds a process with no pid in this namespace"}
		}
		if err := c.guard.check(pid); err != nil {
			return nil, err
		}
		p, err := platform.ReadStat(pid)
		if err != nil || p.Zombie() {
			continue // gone
		}
		covered = append(covered, Target{PID: pid, StartTicks: p.StartTicks})
	}
	if len(covered) == 0 {
		return nil, nil
	}
	if err := os.WriteFile(c.dir+"/cgroup.kill", []byte("1"), 0); err != nil {
		return nil, fmt.Errorf("cgroup.kill of %s: %w", c.Path, err)
	}
	return covered, nil
}

func (c *Confinement) populated() bool {
	busy, err := CgroupPopulated(c.Path)
	return err != nil || busy
}

func (c *Confinement) procs() []int {
	pids, _ := subtreeProcs(c.dir)
	return pids
}

func (c *Confinement) remove() bool {
	deadline := time.Now().Add(time.Second)
	for {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (g *Guard) reconfined(path string, from map[int]string, first string) (*Confinement, error) {
	root := Cgroup2Root()
	if root == "" || !filepath.IsAbs(path) || filepath.Clean(path) != path || !strings.HasPrefix(filepath.Base(path), confinePrefix) {
		return nil, fmt.Errorf("confinement %q: not one of the reaper's", path)
	}
	if _, err := os.Stat(root + path); err != nil {
		return nil, err
	}
	c := &Confinement{Path: path, dir: root + path, guard: g, moved: map[int]uint64{}, from: from, first: first}
	return c, nil
}
