package platform

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"time"
)

// Snapshot is one consistent-as-possible read of the whole process table:
// every process is read once, in one pass, and the tree is built in memory.
type Snapshot struct {
	// Procs holds every visible process, sorted by PID.
	Procs []Process
	// BootID identifies this boot (/proc/sys/kernel/random/boot_id); with a
	// process's StartTicks it forms the process's start identity.
	BootID string
	// ClockTicks is USER_HZ, the unit of StartTicks, UTime and STime.
	ClockTicks uint64
	// Uptime is the time since boot when the snapshot was taken.
	Uptime time.Duration
	// Taken is the wall-clock time the snapshot was taken.
	Taken time.Time
	// Self is the pid of the process that took the snapshot (0 if built).
	Self int
	// Pipeline are the other commands of the pipeline the reaper runs in
	// (Linux: the siblings its pipes lead to), by pid: its own job, never
	// a finding.
	Pipeline map[int]bool
	// FixtureUID, for a fixture's table (Self 0), is the uid of the
	// reaper that took it, from the fixture's self/status ("Uid:" line), so
	// that a fixture is judged the same by whoever scans it; NoUID if the
	// fixture does not say.
	FixtureUID uint32
	// PTY is the system's pseudo-terminal usage, when known.
	PTY PTYUsage
	// Warnings are per-process problems that did not fail the snapshot.
	Warnings []string
	// NoReparenting: the system never reparents an orphan (Windows): a
	// process keeps its dead parent's pid as its ppid, and the orphan's
	// sign is Process.ParentGone, not an adopting init.
	NoReparenting bool

	reader      detailReader
	reads       int // lazy detail reads (Reads)
	frozen      bool
	misses      int // details asked while frozen (Misses)
	closer      func() error
	cgroupProcs func(path string) ([]int, error)
	// wallStart: StartTicks are microseconds since the epoch (macOS), not
	// clock ticks since boot (Linux).
	wallStart bool
	// statusUID: Process.UID is provisional and Snapshot.UID reads the real
	// uid from /proc/PID/status (Linux).
	statusUID bool
	// lazyOwners: Process.UID is not read with the table; Owner reads it
	// (the live table on Linux). owning and ownersAt are OwnsAny's: the
	// uids met so far, and how far into Procs it has looked.
	lazyOwners bool
	owning     map[uint32]bool
	ownersAt   int
	// keepEnv, when set, names the only variables kept of the environments
	// read (KeepEnv); env keeps them for the lazy reads.
	keepEnv map[string]bool
	env     *envKeeper
	// byStart indexes Procs by start, built once (StartedBetween).
	byStart     []int32
	byStartOnce sync.Once
	// containers reads the MSIX containers (Containers), once; nil where
	// there are none to read.
	containers     func() ([]Container, error)
	containersOnce sync.Once
	containersRead []Container
	containersErr  error
}

// StartedBetween returns the processes that started in [from, to], in the
// order they started. The index — the positions of Procs in the order of
// their start, 4 bytes a process — is built once per snapshot, so that
// looking up many windows (one per task row of many users' stores) costs
// a binary search each, not a walk of the table. A start time is what Age
// says it is, which never decreases as StartTicks grows.
func (s *Snapshot) StartedBetween(from, to time.Time) []*Process {
	s.byStartOnce.Do(func() {
		s.byStart = make([]int32, len(s.Procs))
		for i := range s.byStart {
			s.byStart[i] = int32(i)
		}
		slices.SortFunc(s.byStart, func(a, b int32) int { return cmp.Compare(s.Procs[a].StartTicks, s.Procs[b].StartTicks) })
	})
	at := func(k int) time.Time { return s.Started(&s.Procs[s.byStart[k]]) }
	lo := sort.Search(len(s.byStart), func(k int) bool { return !at(k).Before(from) })
	var out []*Process
	for k := lo; k < len(s.byStart) && !at(k).After(to); k++ {
		out = append(out, &s.Procs[s.byStart[k]])
	}
	return out
}

// PTYUsage is how many pseudo-terminals are allocated, against the limit
// (kernel.pty.nr and kernel.pty.max). Max is 0 when they are not known.
type PTYUsage struct {
	InUse, Max int
}

// NewSnapshot builds a snapshot from processes made in Go. Details not given
// through WithDetails read as empty. It sorts procs by PID.
func NewSnapshot(procs []Process, bootID string, uptime time.Duration, taken time.Time) *Snapshot {
	s := &Snapshot{Procs: procs, BootID: bootID, ClockTicks: 100, Uptime: uptime, Taken: taken}
	sort.Slice(s.Procs, func(i, j int) bool { return s.Procs[i].PID < s.Procs[j].PID })
	return s
}

// NewWallSnapshot is NewSnapshot for processes whose StartTicks are
// microseconds since the epoch, as macOS gives them (DarwinSnapshot): the
// macOS shape of a table, made in Go, for tests on any OS.
func NewWallSnapshot(procs []Process, bootID string, boot, taken time.Time) *Snapshot {
	s := NewSnapshot(procs, bootID, taken.Sub(boot), taken)
	s.ClockTicks, s.wallStart = 1e6, true
	return s
}

// WallClockStarts reports whether the table's start times are wall-clock
// times (macOS: microseconds since the epoch) rather than clock ticks since
// boot (Linux): what a client recorded of a start is compared accordingly.
func (s *Snapshot) WallClockStarts() bool { return s.wallStart }

// Started is when p started: to the microsecond on macOS, to the clock
// tick after this boot's start on Linux.
func (s *Snapshot) Started(p *Process) time.Time { return s.Taken.Add(-s.Age(p)) }

// DropDetails lets go of the details read for every process keep does not
// name: once a run's plan and report are made, only the trees it acts on
// are looked at again, and a reap holds its snapshot through its graces.
// A dropped detail is read again if it is asked for.
func (s *Snapshot) DropDetails(keep func(p *Process) bool) {
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.details == nil || keep(p) {
			continue
		}
		p.details = nil
		p.loaded &^= detailCmdline | detailEnviron | detailCgroup | detailStdio | environDenied | cmdlineInPart | environInPart | cmdlineEmpty | missed
	}
}

// Close releases what the snapshot holds open for on-demand reads.
func (s *Snapshot) Close() error {
	if s.closer == nil {
		return nil
	}
	err := s.closer()
	s.closer, s.reader = nil, nil
	return err
}

// Index returns the position of pid in Procs, or -1.
func (s *Snapshot) Index(pid int) int {
	i := sort.Search(len(s.Procs), func(i int) bool { return s.Procs[i].PID >= pid })
	if i < len(s.Procs) && s.Procs[i].PID == pid {
		return i
	}
	return -1
}

// Get returns the process with pid, or nil when the snapshot did not see it.
func (s *Snapshot) Get(pid int) *Process {
	if i := s.Index(pid); i >= 0 {
		return &s.Procs[i]
	}
	return nil
}

// Identity is a process's start identity: "<boot_id>:<starttime>" on Linux
// (ledger/schema.json). Two processes with the same pid and identity are the same
// process, up to the clock-tick granularity of starttime.
func (s *Snapshot) Identity(p *Process) string {
	if s.wallStart {
		return FormatDarwinIdentity(p.StartTicks)
	}
	return FormatIdentity(s.BootID, p.StartTicks)
}

// Age is how long p had been running when the snapshot was taken.
func (s *Snapshot) Age(p *Process) time.Duration {
	if s.wallStart {
		if age := s.Taken.Sub(time.UnixMicro(int64(p.StartTicks))); age > 0 {
			return age
		}
		return 0
	}
	if s.ClockTicks == 0 {
		return 0
	}
	// Compared in ticks first: a start past the uptime (a clock step, a
	// fixture's value) is age 0, and no multiplication can overflow, so
	// the age never grows with StartTicks (StartedBetween relies on it).
	if p.StartTicks/s.ClockTicks > uint64(s.Uptime/time.Second) {
		return 0
	}
	started := time.Duration(p.StartTicks/s.ClockTicks)*time.Second + time.Duration(p.StartTicks%s.ClockTicks)*time.Second/time.Duration(s.ClockTicks)
	if started > s.Uptime {
		return 0
	}
	return s.Uptime - started
}

// CgroupMembers returns the pids of the live processes in the cgroup whose
// path (as Cgroup.Path gives it) is path. On a live host it reads the
// cgroup's cgroup.procs; otherwise (fixtures, or no cgroupfs) it reads the
// cgroup of every process in the snapshot.
func (s *Snapshot) CgroupMembers(path string) []int {
	if s.cgroupProcs != nil {
		if pids, err := s.cgroupProcs(path); err == nil {
			return pids
		}
	}
	var pids []int
	for i := range s.Procs {
		p := &s.Procs[i]
		if !p.KernelThread() && !p.Zombie() && s.Cgroup(p).Path() == path {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
