package kill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// cgroup2Magic is CGROUP2_SUPER_MAGIC (include/uapi/linux/magic.h).
const cgroup2Magic = 0x63677270

func cgroup2Root() string {
	for _, mnt := range platform.Cgroup2Mounts {
		var st unix.Statfs_t
		if unix.Statfs(mnt, &st) == nil && st.Type == cgroup2Magic {
			return mnt
		}
	}
	return ""
}

// maxCgroupProcs bounds how many processes a cgroup killed as a unit may
// hold: a finding is a process tree, not a host.
const maxCgroupProcs = 4096

func (h *Handle) cgroup() (string, error) {
	b, err := os.ReadFile(platform.ProcPath(h.PID, "cgroup"))
	if err != nil {
		if gone(err) {
			return "", fmt.Errorf("pid %d: %w", h.PID, ErrGone)
		}
		return "", err
	}
	if err := h.verify(); err != nil {
		return "", err
	}
	cg := platform.ParseCgroup(b)
	if cg.Unified == "" {
		return "", fmt.Errorf("pid %d: no cgroup v2 entry: %w", h.PID, errors.ErrUnsupported)
	}
	return cg.Unified, nil
}

func (g *Guard) killCgroup(path string, members []*Handle) ([]Target, error) {
	if path == "" || path[0] != '/' || filepath.Clean(path) != path || strings.ContainsRune(path, 0) {
		return nil, fmt.Errorf("cgroup path %q: not absolute and clean", path)
	}
	if path == "/" {
		return nil, &RefusalError{0, "the root cgroup is never killed as a unit"}
	}
	root := Cgroup2Root()
	if root == "" {
		return nil, fmt.Errorf("no cgroup v2 hierarchy: %w", errors.ErrUnsupported)
	}
	dir := root + path
	if _, err := os.Stat(dir + "/cgroup.kill"); err != nil {
		if _, derr := os.Stat(dir); derr != nil {
			return nil, fmt.Errorf("cgroup %s: %w", path, ErrGone)
		}
		return nil, fmt.Errorf("cgroup %s has no cgroup.kill (Linux < 5.14): %w", path, errors.ErrUnsupported)
	}
	if self, err := selfCgroup(); err != nil {
		return nil, &RefusalError{os.Getpid(), "the reaper's own cgroup is unknown: " + err.Error()}
	} else if self == path || strings.HasPrefix(self, path+"/") {
		return nil, &RefusalError{os.Getpid(), "the reaper itself is in cgroup " + path}
	}
	pids, err := subtreeProcs(dir)
	if err != nil {
		return nil, err
	}
	byPID := make(map[int]*Handle, len(members))
	for _, h := range members {
		byPID[h.PID] = h
	}
	var covered []Target
	for _, pid := range pids {
		t, err := g.ofTree(pid, byPID)
		switch {
		case errors.Is(err, ErrGone):
			continue
		case err != nil:
			return nil, err
		}
		covered = append(covered, t)
	}
	if len(covered) == 0 {
		return nil, fmt.Errorf("cgroup %s holds no live process: %w", path, ErrGone)
	}
	if err := os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENODEV):
			return nil, fmt.Errorf("cgroup %s: %w", path, ErrGone)
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return nil, fmt.Errorf("cgroup %s: %w", path, ErrPermission)
		}
		return nil, fmt.Errorf("cgroup.kill of %s: %w", path, err)
	}
	return covered, nil
}

// ofTree proves that pid, found in a cgroup, belongs to the tree whose
// members are byPID: it passes the guard, and it is a member with an
// unchanged start identity or a live descendant of one.
func (g *Guard) ofTree(pid int, byPID map[int]*Handle) (Target, error) {
	if pid <= 0 {
		// cgroup.procs shows 0 for a process of another PID namespace
		// that has no pid in this one: nothing proves what it is.
		return Target{}, &RefusalError{pid, "the cgroup holds a process with no pid in this namespace"}
	}
	if err := g.check(pid); err != nil {
		return Target{}, err
	}
	p, err := platform.ReadStat(pid)
	if err != nil {
		if gone(err) {
			return Target{}, ErrGone
		}
		return Target{}, err
	}
	if p.Zombie() {
		return Target{}, ErrGone
	}
	t := Target{PID: pid, StartTicks: p.StartTicks}
	if h, ok := byPID[pid]; ok {
		if h.start != p.StartTicks {
			return Target{}, &RefusalError{pid, "its pid names another process than the tree's member now"}
		}
		return t, nil
	}
	// Not a member: a child forked since the last rescan is one by
	// ancestry. Walk its parents to a member whose identity still holds.
	for cur, steps := p, 0; steps < 64; steps++ {
		if err := g.check(cur.PPID); err != nil {
			return Target{}, &RefusalError{pid, fmt.Sprintf("the cgroup holds it and it is not of this tree (ancestor %d refused: %v)", cur.PPID, err)}
		}
		parent, err := platform.ReadStat(cur.PPID)
		if err != nil {
			break
		}
		if h, ok := byPID[cur.PPID]; ok {
			if parent.StartTicks != h.start {
				break
			}
			// The child's identity is read once more: it must still be
			// the process whose parent chain was walked.
			if again, err := platform.ReadStat(pid); err != nil || again.StartTicks != p.StartTicks {
				return Target{}, ErrGone
			}
			return t, nil
		}
		cur = parent
	}
	return Target{}, &RefusalError{pid, "the cgroup holds it and it is not of this tree"}
}

// subtreeProcs reads cgroup.procs of dir and of every cgroup below it: the
// set cgroup.kill would reach.
func subtreeProcs(dir string) ([]int, error) {
	var pids []int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir {
				return nil // a sub-cgroup removed while walking holds nothing
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path + "/cgroup.procs")
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENODEV):
			return nil // removed concurrently: "a removed cgroup contains no processes"
		case errors.Is(err, unix.EOPNOTSUPP):
			// A threaded cgroup has no cgroup.procs; cgroup.kill refuses it
			// too. Its processes are in its domain's cgroup.procs.
			return nil
		case err != nil:
			return err
		}
		more, err := platform.ParseCgroupProcs(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pids = append(pids, more...)
		if len(pids) > maxCgroupProcs {
			return &RefusalError{0, fmt.Sprintf("the cgroup holds more than %d processes", maxCgroupProcs)}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cgroup %s: %w", dir, ErrGone)
		}
		return nil, err
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil // cgroup.procs may list a pid twice
}

// selfCgroup is the reaper's own cgroup v2 path.
func selfCgroup() (string, error) {
	b, err := os.ReadFile(platform.DefaultProcRoot + "/self/cgroup")
	if err != nil {
		return "", err
	}
	cg := platform.ParseCgroup(b)
	if cg.Unified == "" {
		return "", errors.New("no cgroup v2 entry in /proc/self/cgroup")
	}
	return cg.Unified, nil
}

func cgroupPopulated(path string) (bool, error) {
	root := Cgroup2Root()
	if root == "" {
		return false, fmt.Errorf("no cgroup v2 hierarchy: %w", errors.ErrUnsupported)
	}
	b, err := os.ReadFile(root + path + "/cgroup.events")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENODEV) {
			return false, nil
		}
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, fmt.Errorf("cgroup %s: no populated line in cgroup.events", path)
}

// gone reports whether err says the process no longer exists: procfs
// answers ENOENT for a vanished /proc/PID and ESRCH for a task that died
// while its file was open.
func gone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH)
}

// A confinement is a cgroup, ended by a write to its cgroup.kill.
const (
	unitKill = "cgroup.kill"
	unitName = "cgroup"
)
