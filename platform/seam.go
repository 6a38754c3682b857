package platform

import "time"

// The platform seam: what each operating system implements, in files
// named for it (proc_linux.go, kill/signal_darwin.go, …), and what the
// files without a build tag share. To add an OS, implement:
//
//	Reading the table (proc_GOOS.go):
//	  ReadSnapshot(root string) (*Snapshot, error) — every process's
//	    identity fields, and a detailReader for the command line,
//	    environment, cgroup, stdio and status of the few read later
//	  StartIdentity(pid int) (string, error) — "what process is this pid
//	    now", comparable with Snapshot.Identity
//	Evidence (fd_GOOS.go): Snapshot.PTYHolds, Snapshot.SampleProcess,
//	  Snapshot.PSS — or nolinux.go's errors.ErrUnsupported
//	Signalling (kill/signal_GOOS.go), the one way a signal leaves reaper:
//	  Handle, Open(Target, *Guard), PidfdSupported, parentPID, and the
//	  Handle's Pidfd, Close, Signal, WaitGone, State
//	Containing a tree (kill/cgroupkill_GOOS.go, kill/confine_GOOS.go):
//	  Handle.Cgroup, Guard.KillCgroup, Cgroup2Root, CgroupPopulated,
//	  Confinement and Guard.Confine — or kill/nolinux.go's refusals, which
//	  make reap follow sessions and process groups instead
//	The host (host/): journald, the service manager, capabilities, PID
//	  namespaces, lock holders; the reader child (child/)
//
// An OS without an implementation builds from the unsupported.go files,
// whose every entry point returns an error wrapping errors.ErrUnsupported:
// a missing platform is never a silent no-op.

// PTYHold is one pseudo-terminal a process holds open.
type PTYHold struct {
	PTS    int  // N of /dev/pts/N
	Master bool // it holds the master (/dev/ptmx); else a slave
	// HungUp: a slave whose master is closed — devpts removed the node, and
	// the link reads "/dev/pts/N (deleted)".
	HungUp bool
}

// Sample is a process's CPU and I/O at one moment.
type Sample struct {
	At       time.Time
	CPUTicks uint64 // utime + stime
	IO       IOCounters
	IOKnown  bool
	// VoluntarySwitches counts the times the process gave up the CPU to
	// wait (voluntary_ctxt_switches in /proc/PID/status): an idle server
	// blocked on its input adds none, one handling requests adds some.
	VoluntarySwitches uint64
	// TTYWritten is the modification time of the terminal on the process's
	// stdio: the tty layer sets it at a write, when it is more than a few
	// seconds stale — a time after some moment proves a write after it.
	TTYWritten time.Time
}
