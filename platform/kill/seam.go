package kill

import (
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
