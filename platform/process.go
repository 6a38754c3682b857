package platform

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one entry of the process table as the snapshot saw it. The
// fields up to UID come from one read of /proc/PID/stat and one fstat of it;
// the details (command line, environment, cgroup) are read on demand through
// the owning Snapshot, because reading them for every process would triple
// the cost of a scan.
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
	// UID is who owns the process, as the snapshot first saw it. On Linux
	// the stat pass takes it from the owner of /proc/PID, which is the
	// effective uid — or root for a task that is not dumpable (proc(5)),
	// which any user can make theirs with prctl(PR_SET_DUMPABLE, 0). Every
	// decision about whose process it is goes through Snapshot.UID, which
	// reads the real uid.
	UID   uint32
	State byte // R, S, D, Z, T, t, X, I, …
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

// detail names one on-demand file.
type detail uint16

const (
	detailCmdline detail = 1 << iota
	detailEnviron
	detailCgroup
	detailStdio
	detailStatus
	// environDenied marks an environment that exists but could not be
	// read (another user's process, without privilege).
	environDenied
	// cmdlineInPart and environInPart mark a command line or environment
	// longer than MaxDetail, of which only the first MaxDetail bytes were
	// read (ReadInPart).
	cmdlineInPart
	environInPart
	// cmdlineEmpty marks a command line read whole and empty from a
	// process that is neither a kernel thread nor a zombie: one between
	// execve's point of no return and the new image's stack being laid out,
	// or past exit_mm while it exits. Its environment read empty too, so
	// nothing it holds was seen (ReadInPart).
	cmdlineEmpty
)

// MaxDetail bounds what is read of one process's command line or
// environment. Both are the process's owner's to make as large as their
// stack limit allows (execve(2): a quarter of RLIMIT_STACK, which an
// ordinary user may raise to unlimited on common distributions), and a
// root reaper reads the candidates of every user: 12 orphans with 5 MB
// command lines once took each run to its deadline. Real command lines
// and environments of agent clients and their servers are a few KiB; what
// is past the bound is not read, the process says so (ReadInPart), and
// the gate never acts on a process it could not read whole.
const MaxDetail = 64 << 10

// capDetail cuts a raw command line or environment read beyond MaxDetail
// and reports whether it did. An environment is cut at the end of its
// last whole entry, so that no value is taken cut short
// (OPENCLAW_GATEWAY_SERVICE_PID=12 of =12345); a command line keeps the
// first MaxDetail bytes, for the report to show.
func capDetail(b []byte, d detail) ([]byte, bool) {
	if len(b) <= MaxDetail {
		return b, false
	}
	b = b[:MaxDetail]
	if d == detailEnviron {
		b = b[:bytes.LastIndexByte(b, 0)+1]
	}
	return b, true
}

// inPart is the bit that marks d read in part.
func inPart(d detail) detail {
	switch d {
	case detailCmdline:
		return cmdlineInPart
	case detailEnviron:
		return environInPart
	}
	return 0
}

type detailData struct {
	cmdline []string
	environ string // raw NUL-separated NAME=VALUE entries
	cgroup  Cgroup
	stdio   string // where fd 0 (else 1, 2) points, when it is a terminal
}

// data returns p's details, making them on first use.
func (p *Process) data() *detailData {
	if p.details == nil {
		p.details = &detailData{}
	}
	return p.details
}

// copyData gives p details of its own (a copy of those it shares, as a
// Process copied by value does) and returns them.
func (p *Process) copyData() *detailData {
	d := &detailData{}
	if p.details != nil {
		*d = *p.details
	}
	p.details = d
	return d
}

// view returns p's details for reading: none read is all empty.
func (p *Process) view() *detailData {
	if p.details == nil {
		return &noDetails
	}
	return p.details
}

var noDetails detailData

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

// detailReader reads the on-demand files of one process.
type detailReader interface {
	read(pid int, what detail) ([]byte, error)
	// fork returns a reader with buffers of its own, for another goroutine.
	fork() detailReader
}

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
	// FixtureUID, for a fixture's table (Self 0), is the uid of the
	// reaper that took it, from the fixture's self/status ("Uid:" line), so
	// that a fixture is judged the same by whoever scans it; NoUID if the
	// fixture does not say.
	FixtureUID uint32
	// PTY is the system's pseudo-terminal usage, when known.
	PTY PTYUsage
	// Warnings are per-process problems that did not fail the snapshot.
	Warnings []string

	reader      detailReader
	closer      func() error
	cgroupProcs func(path string) ([]int, error)
	// wallStart: StartTicks are microseconds since the epoch (macOS), not
	// clock ticks since boot (Linux).
	wallStart bool
	// statusUID: Process.UID is provisional and Snapshot.UID reads the real
	// uid from /proc/PID/status (Linux).
	statusUID bool
	// keepEnv, when set, names the only variables kept of the environments
	// read (KeepEnv); env keeps them for the lazy reads.
	keepEnv map[string]bool
	env     *envKeeper
	// byStart indexes Procs by start, built once (StartedBetween).
	byStart     []int32
	byStartOnce sync.Once
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

// KeepEnv limits what is kept of the environments read from now on to the
// named variables: an environment is kilobytes, a table's candidates are
// thousands, and the scan and policy look up a handful of names. Getenv of
// another name reads that process's environment again, so no lookup is
// ever answered wrongly.
func (s *Snapshot) KeepEnv(names []string) {
	s.keepEnv = map[string]bool{}
	for _, n := range names {
		s.keepEnv[n] = true
	}
	s.env = nil
}

// envKeeper keeps what KeepEnv names of raw environments. Processes mostly
// inherit one environment, so what is kept of theirs is mostly the same
// bytes: each distinct value is stored once and shared (measured: 2,000
// orphans of one shell, 876 KiB allocated → one copy). A keeper serves one
// goroutine; Prefetch gives each worker its own.
type envKeeper struct {
	names map[string]bool // nil: keep everything
	buf   []byte          // scratch for the kept entries
	seen  map[string]string
}

func (s *Snapshot) newEnvKeeper() *envKeeper {
	return &envKeeper{names: s.keepEnv, seen: map[string]string{}}
}

// keep returns what is kept of the raw environment b: all of it, or only
// the entries KeepEnv names.
func (k *envKeeper) keep(b []byte) string {
	kept := b
	if k.names != nil {
		k.buf = k.buf[:0]
		for len(b) > 0 {
			var entry []byte
			entry, b = cutByte(b, 0)
			if eq := bytes.IndexByte(entry, '='); eq > 0 && k.names[string(entry[:eq])] {
				k.buf = append(append(k.buf, entry...), 0)
			}
		}
		kept = k.buf
	}
	if v, ok := k.seen[string(kept)]; ok {
		return v
	}
	v := string(kept)
	k.seen[v] = v
	return v
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

// TakenTicks is the start a process started as the snapshot was taken
// would carry, in StartTicks' unit: a process whose StartTicks are below
// it was running before the snapshot.
func (s *Snapshot) TakenTicks() uint64 {
	if s.wallStart {
		return uint64(s.Taken.UnixMicro())
	}
	return uint64(s.Uptime/time.Second)*s.ClockTicks + uint64(s.Uptime%time.Second)*s.ClockTicks/uint64(time.Second)
}

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
		p.loaded &^= detailCmdline | detailEnviron | detailCgroup | detailStdio | environDenied | cmdlineInPart | environInPart | cmdlineEmpty
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

// Cmdline returns p's argv, reading it on first use. It is nil for kernel
// threads, zombies and processes that vanished or could not be read.
func (s *Snapshot) Cmdline(p *Process) []string {
	if s.load(p, detailCmdline) {
		p.data().cmdline = ParseCmdline(s.raw(p, detailCmdline))
	}
	return p.view().cmdline
}

// CommandLine is p's argv joined with spaces, or its comm in brackets when
// there is no argv (kernel threads, zombies, unreadable), as ps shows it.
func (s *Snapshot) CommandLine(p *Process) string {
	if argv := s.Cmdline(p); len(argv) > 0 {
		return strings.Join(argv, " ")
	}
	return "[" + p.Comm + "]"
}

// Getenv looks name up in p's environment, reading it on first use. The
// environment is kept as the kernel gave it and searched in place:
// splitting it into strings for every candidate would cost more than
// reading it. It finds nothing when the environment can't be read (another
// user's process without privilege, a zombie).
func (s *Snapshot) Getenv(p *Process, name string) (string, bool) {
	if s.keepEnv != nil && !s.keepEnv[name] && s.reader != nil && !p.KernelThread() && !p.Zombie() {
		b, err := s.reader.read(p.PID, detailEnviron)
		if err != nil {
			return "", false
		}
		b, _ = capDetail(b, detailEnviron)
		return LookupEnv(string(b), name)
	}
	return LookupEnv(s.environ(p), name)
}

func (s *Snapshot) environ(p *Process) string {
	if s.load(p, detailEnviron) {
		b, err := s.reader.read(p.PID, detailEnviron)
		switch {
		case err == nil:
			b = p.capped(b, detailEnviron)
			if s.env == nil {
				s.env = s.newEnvKeeper()
			}
			p.data().environ = s.env.keep(b)
		case !isGone(err):
			s.Warnings = append(s.Warnings, err.Error())
			p.loaded |= environDenied
		}
	}
	return p.view().environ
}

// EnvironUnreadable reports whether p's environment exists but could not
// be read: then the markers a gateway leaves there were not checked, and
// evidence that rests on their absence must say so.
func (s *Snapshot) EnvironUnreadable(p *Process) bool {
	s.environ(p)
	return p.loaded&environDenied != 0
}

// UID returns the real uid of p: the user who owns it, the one kill(2)
// checks a sender against (kill(2): the sender's uid must match the
// target's real or saved set-user-ID). On Linux it is read on first use
// from the "Uid:" line of /proc/PID/status, never taken from the owner of
// /proc/PID, which is root for a non-dumpable task of any user. It is
// NoUID when the process could not be read, so that it counts as nobody's.
func (s *Snapshot) UID(p *Process) uint32 {
	if !s.statusUID || p.loaded&detailStatus != 0 {
		return p.UID
	}
	p.loaded |= detailStatus
	if p.KernelThread() {
		return p.UID
	}
	b, err := s.reader.read(p.PID, detailStatus)
	uid, ok := ParseStatusUID(b)
	switch {
	case err == nil && ok:
		p.UID = uid
	case err != nil && s.Self == 0 && errors.Is(err, fs.ErrNotExist):
		// A fixture's process without a status file: the owner of its
		// directory, which is all a fixture says.
	case err != nil && !isGone(err):
		s.Warnings = append(s.Warnings, err.Error())
		p.UID = NoUID
	case err != nil:
		// Gone since the stat pass: nobody's, and marked dead ('X') so
		// that callers treat it as the exited process it is.
		p.UID, p.State = NoUID, 'X'
	default:
		p.UID = NoUID // a status without a Uid line: nobody's
	}
	return p.UID
}

// Cgroup returns p's cgroup, reading it on first use.
func (s *Snapshot) Cgroup(p *Process) Cgroup {
	if s.load(p, detailCgroup) {
		p.data().cgroup = ParseCgroup(s.raw(p, detailCgroup))
	}
	return p.view().cgroup
}

// Terminal is the pseudo-terminal a process is attached to.
type Terminal struct {
	// PTS is N of /dev/pts/N, or -1 when the process has none.
	PTS int
	// HungUp: the terminal's master was closed. The kernel then clears the
	// session's controlling tty (tty_nr reads 0) and devpts removes the
	// node, but the process still holds the slave as its stdio, which
	// /proc/PID/fd shows as "/dev/pts/N (deleted)".
	HungUp bool
}

// PTYShell reports whether p is a shell on a pseudo-terminal: it leads its
// session and has a /dev/pts terminal, as its controlling terminal or —
// once the master is gone and the kernel cleared that — as its stdio.
func (s *Snapshot) PTYShell(p *Process) bool {
	return p.SessionLeader() && s.Terminal(p).PTS >= 0
}

// Terminal returns the pseudo-terminal p is attached to: its controlling
// terminal when it has one, else the terminal its stdio points at. The
// second is read on first use, from the fd links in /proc, which needs the
// same uid as p or privilege.
func (s *Snapshot) Terminal(p *Process) Terminal {
	if n := p.PTS(); n >= 0 {
		return Terminal{PTS: n}
	}
	if s.load(p, detailStdio) {
		p.data().stdio = string(s.raw(p, detailStdio))
	}
	return parsePTSLink(p.view().stdio)
}

// parsePTSLink reads "/dev/pts/N" or "/dev/pts/N (deleted)".
func parsePTSLink(link string) Terminal {
	rest, ok := strings.CutPrefix(link, "/dev/pts/")
	if !ok {
		return Terminal{PTS: -1}
	}
	rest, hungUp := strings.CutSuffix(rest, " (deleted)")
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return Terminal{PTS: -1}
	}
	return Terminal{PTS: n, HungUp: hungUp}
}

// prefetchWorkers bounds the goroutines of Prefetch, as statWorkers does
// the stat pass: the work is in the kernel and runs on separate cores.
const prefetchWorkers = 2

// Prefetch reads the command line, environment and cgroup of procs now,
// with up to two goroutines over disjoint halves: the scan asks for these
// of every candidate root, and reading them one by one was a quarter of a
// 10,000-process scan. Details already read are left alone.
func (s *Snapshot) Prefetch(procs []*Process) {
	if s.reader == nil || len(procs) < 64 {
		return // the lazy path reads these as needed
	}
	workers := prefetchWorkers
	chunk := (len(procs) + workers - 1) / workers
	warnings := make([][]string, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		part := procs[min(w*chunk, len(procs)):min((w+1)*chunk, len(procs))]
		r, env := s.reader.fork(), s.newEnvKeeper()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range part {
				if p.KernelThread() || p.Zombie() {
					continue
				}
				for _, d := range []detail{detailCmdline, detailEnviron, detailCgroup} {
					if p.loaded&d != 0 {
						continue
					}
					b, err := r.read(p.PID, d)
					if err == nil {
						b = p.capped(b, d)
					}
					if err != nil && !isGone(err) {
						warnings[w] = append(warnings[w], err.Error())
						if d == detailEnviron {
							p.loaded |= environDenied
						}
					}
					switch d {
					case detailCmdline:
						p.data().cmdline = ParseCmdline(b)
					case detailEnviron:
						p.data().environ = env.keep(b)
					case detailCgroup:
						p.data().cgroup = ParseCgroup(b)
					}
					p.loaded |= d
				}
			}
		}()
	}
	wg.Wait()
	for _, w := range warnings {
		s.Warnings = append(s.Warnings, w...)
	}
}

// load marks d as loaded for p and reports whether it must be read now.
func (s *Snapshot) load(p *Process, d detail) bool {
	if p.loaded&d != 0 {
		return false
	}
	p.loaded |= d
	return s.reader != nil && !p.KernelThread() && !p.Zombie()
}

func (s *Snapshot) raw(p *Process, d detail) []byte {
	b, err := s.reader.read(p.PID, d)
	if err != nil {
		if !isGone(err) {
			s.Warnings = append(s.Warnings, err.Error())
		}
		return nil
	}
	return p.capped(b, d)
}

// capped is b cut to MaxDetail (capDetail), marking p's detail d read in
// part when it was cut, and p's command line empty when it read so.
func (p *Process) capped(b []byte, d detail) []byte {
	b, cut := capDetail(b, d)
	if cut {
		p.loaded |= inPart(d)
	}
	if d == detailCmdline && len(b) == 0 {
		p.loaded |= cmdlineEmpty
	}
	return b
}

// ReadInPart says what of p was too large to read whole — its command
// line, its environment — or "" when nothing was: its details are read
// now if they were not. What was past MaxDetail could have matched a
// rule, a [[protect]] entry or an owner's marker, so nothing is decided
// about p from what was read alone but that it is there.
func (s *Snapshot) ReadInPart(p *Process) string {
	s.Cmdline(p)
	s.environ(p)
	switch p.loaded & (cmdlineInPart | environInPart) {
	case cmdlineInPart:
		return fmt.Sprintf("its command line is longer than %d KiB and was read in part", MaxDetail>>10)
	case environInPart:
		return fmt.Sprintf("its environment is longer than %d KiB and was read in part", MaxDetail>>10)
	case cmdlineInPart | environInPart:
		return fmt.Sprintf("its command line and environment are longer than %d KiB and were read in part", MaxDetail>>10)
	}
	if p.loaded&cmdlineEmpty != 0 && p.Flags&pfExiting == 0 {
		// The kernel lays out the new image's argv and environment after
		// execve has closed the caller's close-on-exec files
		// (fs/binfmt_elf.c: begin_new_exec, then create_elf_tables), and
		// drops them at exit_mm: in between both read empty.
		return "its command line and environment read empty (it was in the middle of execve)"
	}
	return ""
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
