package platform

import (
	"errors"
	"sort"
	"strings"
	"syscall"
)

// Process is one entry of the process table as the snapshot saw it. The
// fields up to Threads come from one read of /proc/PID/stat; the owner and
// the details (command line, environment, cgroup) are read on demand
// through the owning Snapshot, because reading them for every process
// would triple the cost of a scan.
type Process struct {
	PID, PPID  int
	PGID, SID  int
	Comm       string
	UTime      uint64 // clock ticks spent in user mode
	STime      uint64 // clock ticks spent in kernel mode
	StartTicks uint64 // clock ticks after boot at which the process started
	RSS        uint64 // resident set size, bytes
	TTY        uint32 // controlling terminal, the kernel's encoded dev_t (0: none)
	Flags      uint32 // the kernel's PF_* flags
	Threads    int32
	// UID is who owns the process, as far as the snapshot has read it. On
	// Linux nothing is read with the table (NoUID until asked, a kernel
	// thread root): Snapshot.Owner takes the owner of /proc/PID, which is
	// the effective uid (the files inside show root for a task that is not
	// dumpable, proc(5), the directory does not) — root for a
	// set-user-ID program any user may run — and Snapshot.UID the real
	// uid, through which every decision about whose process it is goes.
	// On macOS the table gives the real uid.
	UID   uint32
	State byte // R, S, D, Z, T, t, X, I, …
	// parentGone: on a system that never reparents (Windows), the
	// recorded parent has exited or its pid names a younger process
	// (ParentGone). Apart from Flags, which are Linux's PF_* bits.
	parentGone bool
	// TPGID is the foreground process group of the process's controlling
	// terminal (-1: none; 0 where the platform does not say).
	TPGID int32

	// loaded says which details were read; the details themselves are
	// kept apart, for the few processes whose details are read, so that a
	// table entry stays small (112 bytes on 64-bit).
	loaded  detail
	details *detailData
}

// pfExiting is PF_EXITING from include/linux/sched.h: set as a process
// starts to exit (do_exit). An exiting process whose command line reads
// empty is past exit_mm, not in the middle of execve: it is no doubt, but
// a process about to be gone.
const pfExiting = 0x00000004

// pfKthread is PF_KTHREAD from include/linux/sched.h: set on kernel threads.
const pfKthread = 0x00200000

// KernelThread reports whether p is a kernel thread. They have no user
// memory, no command line, and are never signalled.
//
// The flag alone says so: the kernel sets it on every kernel thread,
// kthreadd (pid 2 of the host's PID namespace) included, and shows it in
// /proc/PID/stat (do_task_stat prints task->flags). Pid 2, or a parent
// of 2, is no sign of one: in a container's PID namespace, where no
// kernel thread is visible, pid 2 is an ordinary process — perhaps an
// orphan the policy names.
func (p *Process) KernelThread() bool {
	return p.Flags&pfKthread != 0
}

// Zombie reports whether p has exited and waits for its parent to reap it.
// A zombie cannot be killed; only its parent (or the parent's death) clears it.
func (p *Process) Zombie() bool { return p.State == 'Z' || p.State == 'X' }

// SessionLeader reports whether p leads its session (pid == sid), as a shell
// started on a pseudo-terminal does.
func (p *Process) SessionLeader() bool { return p.PID == p.SID }

// PTS returns the number N of the /dev/pts/N terminal p has as controlling
// terminal, or -1. Unix98 pseudo-terminal slaves have majors 136–143
// (Documentation/admin-guide/devices.txt), and tty_nr in /proc/PID/stat
// encodes the minor in bits 0–7 and 20–31 and the major in bits 8–15.
func (p *Process) PTS() int {
	major := (p.TTY >> 8) & 0xfff
	minor := (p.TTY & 0xff) | ((p.TTY >> 12) & 0xfff00)
	if major < 136 || major > 143 {
		return -1
	}
	return int((major-136)<<20 | minor)
}

// Cgroup is where a process sits in the cgroup hierarchies.
type Cgroup struct {
	// Unified is the cgroup v2 path (the "0::" line), empty when absent.
	Unified string
	// Systemd is the path in the v1 name=systemd hierarchy, empty when absent.
	Systemd string
}

// Path is the path that names the process's unit: the v2 path when it says
// more than "/", else the v1 name=systemd path (hybrid and legacy layouts),
// else whatever is known.
func (c Cgroup) Path() string {
	if c.Unified != "" && c.Unified != "/" {
		return c.Unified
	}
	if c.Systemd != "" {
		return c.Systemd
	}
	return c.Unified
}

// Errors of the kill path (platform/kill) and of the reads of one live
// process. Callers match them with errors.Is.
var (
	// ErrGone: the process no longer exists (ESRCH, or only its zombie).
	// For a reaper, gone is success.
	ErrGone = errors.New("process gone")
	// ErrIdentity: the pid now names another process than the one scanned
	// (pid reuse). Nothing is signalled.
	ErrIdentity = errors.New("pid names another process now")
	// ErrRefused: the seam refuses to signal this process at all.
	ErrRefused = errors.New("refused")
	// ErrPermission: the kernel says the reaper may not signal it (EPERM).
	ErrPermission = errors.New("no permission to signal")
)

// NoUID is the uid of a process whose owner could not be read: (uid_t)-1,
// which no account has (setresuid(2) reserves it for "unchanged"), so it
// matches no user list and is nobody's own process.
const NoUID = ^uint32(0)

// WithDetails returns p with the given details filled in, as if they had been
// read. It is how snapshots built in Go (tests, other platforms' fixtures)
// carry command lines, environments and cgroups.
func (p Process) WithDetails(cmdline, environ []string, cg Cgroup) Process {
	p.loaded |= detailCmdline | detailEnviron | detailCgroup
	d := p.copyData()
	d.cmdline, d.environ, d.cgroup = cmdline, strings.Join(environ, "\x00"), cg
	return p
}

// WithStdio returns p with the target of its standard input link (as
// readlink of /proc/PID/fd/0 shows it) filled in, for snapshots built in Go.
func (p Process) WithStdio(link string) Process {
	p.loaded |= detailStdio
	p.copyData().stdio = link
	return p
}

// sortProcs orders processes by pid; getdents lists /proc in pid order on
// current kernels, so this is usually a no-op check.
func sortProcs(p []Process) {
	if !sort.SliceIsSorted(p, func(i, j int) bool { return p[i].PID < p[j].PID }) {
		sort.Slice(p, func(i, j int) bool { return p[i].PID < p[j].PID })
	}
}

// isGone reports whether err says the process no longer exists: procfs
// answers ENOENT for a vanished /proc/PID and ESRCH for a task that died
// while its file was open.
func isGone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH)
}
