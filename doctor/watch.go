package doctor

import (
	"runtime"
	"strings"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/platform/watch"
)

// forkStorms says how the watch sees fork storms here: the kernel's fork
// events where it may listen, else a sample each second.
func forkStorms() string {
	if runtime.GOOS != "linux" {
		return "fork storms: not watched on this platform"
	}
	if !host.HostPIDNamespace() {
		return "fork storms: sampled each second (the kernel's fork events are the host's PID namespace's alone); a parent is named by the children alive at a sample"
	}
	f, err := platform.OpenForks()
	if err != nil {
		return "fork storms: sampled each second (the kernel's fork events: " + err.Error() + "; root has them, and any user from Linux 6.6); a parent is named by the children alive at a sample"
	}
	f.Close()
	return "fork storms: every fork seen as it happens (the kernel's fork events)"
}

// watchAbility says what `reaper watch` can watch here: owners' exits
// (pidfd and epoll on Linux, kqueue on macOS, thread-pool waits on
// Windows) and the clients' dirs where a new session's file appears
// (inotify, Linux; ReadDirectoryChangesW, Windows). What it cannot watch,
// the watch polls or leaves to its backstop, and says so.
func watchAbility() audit.Check {
	c := audit.Check{Name: "watch", Status: audit.CheckOK}
	var missing []string
	if e, err := watch.New(); err != nil {
		missing = append(missing, "owners' exits ("+err.Error()+"): a pass every 10 s instead")
	} else {
		e.Close()
		c.Details = append(c.Details, "owners' exits: watched ("+watch.ExitsMechanism()+")")
	}
	if d, err := watch.NewDirs(); err != nil {
		missing = append(missing, "new sessions' files ("+err.Error()+"): a session started after a pass is watched from the next one (at most --backstop later)")
	} else {
		d.Close()
		c.Details = append(c.Details, "new sessions' files: watched ("+watch.DirsMechanism()+")")
	}
	c.Details = append(c.Details, forkStorms())
	switch {
	case len(missing) == 0:
		c.Summary = "reaper watch reacts to an owner's exit and to a new session's file without polling"
	default:
		c.Status = audit.CheckWarn
		c.Summary = "reaper watch cannot watch " + strings.Join(missing, "; nor ")
		c.Fix = "a kernel of 5.3 or later has pidfds; a seccomp filter or container runtime that refuses pidfd_open, epoll or inotify_init1 keeps the watch polling"
	}
	return c
}
