package scan

import (
	"path"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// A direct child of PID 1 or of a systemd user manager is not always an
// orphan: service managers start processes there on purpose. On a systemd
// host each such process sits in the cgroup of the unit that started it,
// and an orphan keeps the cgroup of the unit or scope it came from
// (cgroups(7): a child starts in its parent's cgroup, and reparenting
// does not move it). So the two differ by cgroup: a process in a
// "*.service" cgroup that no owner's unit pattern names, with no live
// owner in that cgroup and no owner's pid marker on it, is that service's
// own process — an MCP server a user runs as a systemd service, say. An
// orphan of a gateway stays in the gateway's service cgroup, or in the
// session or terminal scope ("*.scope") the gateway ran in.
//
// Minimal init programs in containers (tini, dumb-init, catatonit) are
// subreapers that start one command on purpose: the child whose argv is
// the tail of the init's argv is that command, not an orphan.

// startedThere reports whether the process at index i, whose parent at
// index parent adopts orphans, was started there on purpose; how says so
// in words.
func (r *Result) startedThere(i, parent int) (bool, string) {
	s := r.Tree.Snap
	p, pp := &s.Procs[i], &s.Procs[parent]
	if pp.PID == 1 || pp.Comm == "systemd" {
		if unit, ok := r.serviceUnit(i); ok {
			return true, "the main process of " + unit
		}
	}
	if (minimalInit(pp.Comm) || reaperRun(s, pp)) && sameArgv(s.Cmdline(p), initCommand(s.Cmdline(pp))) {
		return true, "the command " + pp.Comm + " was started to run"
	}
	return false, ""
}

// serviceUnit returns the service unit the process at index i belongs to,
// when it is a service's own process: see above.
func (r *Result) serviceUnit(i int) (string, bool) {
	s := r.Tree.Snap
	p := &s.Procs[i]
	cg := s.Cgroup(p).Path()
	unit := path.Base(cg)
	if cg == "" || !strings.HasSuffix(unit, ".service") || strings.HasPrefix(unit, "user@") {
		return "", false
	}
	for _, o := range r.cfg.Owners {
		if o.Cgroup != nil && o.Cgroup.MatchString(cg) {
			return "", false
		}
		if o.PIDEnv != "" {
			if _, ok := s.Getenv(p, o.PIDEnv); ok {
				return "", false
			}
		}
	}
	// One read of the unit's members for every owner at once.
	if len(r.cfg.Owners) > 0 {
		for _, pid := range s.CgroupMembers(cg) {
			if j := s.Index(pid); j >= 0 && r.ownerOf(j) >= 0 {
				return "", false
			}
		}
	}
	return unit, true
}

// minimalInit reports whether comm is a container init that runs one
// command and reaps orphans.
func minimalInit(comm string) bool {
	switch comm {
	case "tini", "tini-static", "docker-init", "dumb-init", "catatonit":
		return true
	}
	return false
}

// reaperRun reports whether p is `reaper run …`: an init too, when a
// container's entrypoint. Its command line is read only for a process
// named reaper: this is asked of every parent in the table.
func reaperRun(s *platform.Snapshot, p *platform.Process) bool {
	if p.Comm != "reaper" {
		return false
	}
	argv := s.Cmdline(p)
	return len(argv) > 1 && argv[1] == "run"
}

// initCommand is the command a minimal init was told to run: what follows
// "--", else what follows its leading options.
func initCommand(argv []string) []string {
	if len(argv) < 2 {
		return nil
	}
	args := argv[1:]
	for k, a := range args {
		if a == "--" {
			return args[k+1:]
		}
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	return args
}

// sameArgv reports whether argv is cmd as exec'd: equal, but for a first
// word that PATH lookup may have turned from a name into a path.
func sameArgv(argv, cmd []string) bool {
	if len(argv) == 0 || len(argv) != len(cmd) {
		return false
	}
	if argv[0] != cmd[0] && path.Base(argv[0]) != path.Base(cmd[0]) {
		return false
	}
	for k := 1; k < len(argv); k++ {
		if argv[k] != cmd[k] {
			return false
		}
	}
	return true
}
