package kill

import (
	"syscall"
	"time"
)

// The seam: what each operating system implements, declared once here
// with its doc, in lowercase in the files named for the OS.

// Cgroup2Root is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on
// a unified host, /sys/fs/cgroup/unified on a hybrid one; "" on a v1-only
// host, where there is no cgroup.kill.
func Cgroup2Root() string { return cgroup2Root() }

// CgroupPopulated reports whether the cgroup v2 at path or a descendant
// still holds a live process ("populated" in cgroup.events); false when
// the cgroup is gone.
func CgroupPopulated(path string) (bool, error) { return cgroupPopulated(path) }

// Confinements lists the confinements in the whole cgroup v2 hierarchy
// older than a few seconds — whatever cgroup the reaper that made each
// ran in — for doctor: a confinement outlives its reap only when
// its maker died. The walk is bounded; an error says it did not finish.
func Confinements(now time.Time) ([]ConfinementLeft, error) { return confinements(now) }

// Open opens a handle on t and proves it is the process the scan saw: the
// guard's refusals first, then pidfd_open, then /proc/PID/stat re-read:
// start time equal, not a kernel thread, not a zombie.
func Open(t Target, g *Guard) (*Handle, error) { return open(t, g) }

// PidfdSupported reports whether this kernel gives pidfds, and whether they
// live on pidfs (unique inodes, Linux 6.9+).
func PidfdSupported() (pidfd, pidfs bool) { return pidfdSupported() }

// SweepConfinements removes the empty confinements older than a few
// seconds that reapers in this reaper's cgroup left — SIGKILLed mid-reap,
// or in a PID namespace that ended under them — under ConfineParent, and
// directly below the reaper's own cgroup where reapers before
// ConfineParent made them. rmdir(2)
// removes only an empty cgroup (EBUSY otherwise), so no process is ever
// moved or signalled here; one that still holds processes is the record
// of what is stopped's to give back (run.StopLog), and doctor names it.
// It returns the paths removed. Not root, or no cgroup v2: nothing.
func SweepConfinements(now time.Time) []string { return sweepConfinementsOS(now) }

// Kill is the seam's signal to a confinement: it writes "1" to its
// cgroup.kill after reading every process the cgroup and its descendants
// hold and checking each against the guard (none is the reaper, an
// ancestor of it, or on the deny list). Everything in it was moved in by
// the reaper or born there. It returns the processes the write covered.
func (c *Confinement) Kill() ([]Target, error) { return c.kill() }

// Move moves the process of h, which must be stopped, into the
// confinement, then proves it was that process that moved: the handle's
// process is still alive (its pidfd is not readable, so the pid was not
// freed and reused between the check and the write) and /proc/PID/cgroup
// now names the confinement.
func (c *Confinement) Move(h *Handle) error { return c.move(h) }

// Moved reports whether pid was moved into the confinement.
func (c *Confinement) Moved(pid int) bool { return c.movedOS(pid) }

// Populated reports whether a live process is left in the confinement.
func (c *Confinement) Populated() bool { return c.populated() }

// Procs lists the processes the confinement holds now.
func (c *Confinement) Procs() []int { return c.procs() }

// Release gives up the confinement without killing it, for a run that
// stops before its last step (an interrupt, a refusal): every process in it
// goes back to the cgroup it came from — one born inside goes where the
// first member came from — and the confinement is removed. It reports what
// could not be moved back.
func (c *Confinement) Release() error { return c.release() }

// Remove removes the confinement once it is empty, waiting up to a second
// for the last exits to be accounted; it reports whether it is gone.
func (c *Confinement) Remove() bool { return c.remove() }

// Confine makes an empty confinement under ConfineParent, named
// "reaper-TAG-NANOS" with the time it was made (SweepConfinements reads
// it). It fails with an error wrapping errors.ErrUnsupported where it
// can't be had: not root, no cgroup v2 hierarchy, a read-only one
// (ProtectControlGroups=), or no cgroup.kill.
func (g *Guard) Confine(tag string) (*Confinement, error) { return g.confine(tag) }

// KillCgroup is the seam's one signal to a unit: it writes "1" to
// cgroup.kill of the cgroup v2 at path, which SIGKILLs every process in it
// and in its descendant cgroups, atomically with respect to forks and
// migrations (Documentation/admin-guide/cgroup-v2.rst, Linux 5.14).
//
// It refuses unless the unit belongs to the tree whose verified handles
// are members (docs/safety.md): the cgroup is not the root, the reaper is not
// in it, and every process its subtree holds — read from each cgroup.procs
// immediately before the write — passes the guard and is either a member
// whose start identity is unchanged or a descendant of one (a child forked
// since the last rescan). It returns the processes the write covered.
// The remaining window is a process that a privileged third party migrates
// into the cgroup between that read and the write.
func (g *Guard) KillCgroup(path string, members []*Handle) ([]Target, error) {
	return g.killCgroup(path, members)
}

// Reconfined is a confinement a reaper that died left, made again from
// its record so that it can be given up (Release): path is its cgroup,
// from the cgroup each recorded member came from, first where the first
// did. Only a cgroup named like the reaper's confinements ("reaper-…")
// is taken.
func (g *Guard) Reconfined(path string, from map[int]string, first string) (*Confinement, error) {
	return g.reconfined(path, from, first)
}

// Cgroup reads the process's cgroup v2 path now ("/" for the root), and
// proves afterwards that the pid still names the process the handle was
// opened on (systemd's pidref_verify after cg_pidref_get_path).
func (h *Handle) Cgroup() (string, error) { return h.cgroup() }

// Close lets go of what the handle holds open (a pidfd, a process
// handle; nothing on macOS).
func (h *Handle) Close() error { return h.close() }

// Pidfd reports whether the handle pins its process, so that no reused
// pid can be reached through it: a pidfd on Linux, a process handle on
// Windows (macOS has neither).
func (h *Handle) Pidfd() bool { return h.pidfd() }

// Signal is the one signal seam: every signal the reaper sends goes
// through it. It refuses what the guard refuses, then sends sig through
// the pidfd — which cannot reach another process — or, without pidfds,
// re-checks the identity immediately before kill(2). ESRCH is ErrGone.
func (h *Handle) Signal(sig syscall.Signal) error { return h.signal(sig) }

// State reads the process's state letter now (R, S, D, T, Z …), "" if gone.
func (h *Handle) State() string { return h.state() }

// WaitGone waits up to d for the process to exit, and reports whether it
// has. A pidfd becomes readable when its process exits (poll(2) on a pidfd,
// Linux 5.3); without one, /proc is polled.
func (h *Handle) WaitGone(d time.Duration) bool { return h.waitGone(d) }

// UnitKill names how a confinement is ended whole, for the records and
// the words: the call ("cgroup.kill" on Linux, "TerminateJobObject" on
// Windows) and what it ends ("cgroup", "job object").
func UnitKill() (call, unit string) { return unitKill, unitName }

// EndCall names the call that carries sig where the system sends no
// signals, for the records and the words: on Windows "TerminateProcess",
// for interrupt, terminate and kill alike; "" where the signal itself is
// sent (Linux, macOS), and for stop and continue.
func EndCall(sig Signal) string {
	if sig == Interrupt || sig == Term || sig == Kill {
		return endCall
	}
	return ""
}
