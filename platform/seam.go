package platform

import (
	"os"
	"time"
)

// The platform seam: what each operating system implements. Each
// function an OS implements is declared once, below (and in each
// subpackage's seam.go), with its doc, and implemented in lowercase in the
// files named for the OS (proc_linux.go, kill/signal_darwin.go, …) or for
// what their build tag covers; the files without a build tag are shared.
// TestPlatformDeclaresOnce holds it: every exported function of platform
// is declared in one file, and each here calls an implementation. To add
// an OS, implement what the seams call — reading the table (readSnapshot,
// startIdentity), the evidence (Snapshot.PTYHolds, SampleProcess, PSS),
// signalling (kill: open, the Handle's methods), containing a tree
// (kill: cgroup2Root, cgroupPopulated, confinements), the host (host:
// journald, the service manager, PID namespaces), the reader child
// (child: runChildOS, limitSelf) and the watch (watch: newWatch, newDirs)
// — or let the unsupported fallbacks answer errors.ErrUnsupported: a
// missing platform is never a silent no-op.

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

// DirNames lists at most n names in the directory path, opened as OpenDir
// opens it: an empty directory is no error, and neither is a longer one
// (the rest is not read).
func DirNames(path string, n int) ([]string, error) { return dirNames(path, n) }

// DirOwner returns the uid that owns the directory at path; a symbolic link
// at path is not followed.
func DirOwner(path string) (int, error) { return dirOwner(path) }

// DirOwnerNoLinks returns the uid that owns the directory at the absolute
// path, reached from / one component at a time with O_NOFOLLOW: a path
// with a symbolic link anywhere in it is refused (ErrSymlink), so what is
// checked is the directory the path names and not one a link points at.
func DirOwnerNoLinks(path string) (uint32, error) { return dirOwnerNoLinks(path) }

// FileOwner is the uid and gid that own fi, from its stat.
func FileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) { return fileOwner(fi) }

// FileUID is the uid that owns the file at path, which fi describes (from
// os.Stat or os.Lstat of path); false where the system gives none. Unix
// reads it from fi; Windows keeps no owner in a stat and reads path's
// security descriptor (the owner SID's RID, as Snapshot.UID gives it).
func FileUID(path string, fi os.FileInfo) (uint32, bool) { return fileUID(path, fi) }

// IsExecutable reports whether the file at path, which fi describes (from
// os.Stat of path), is a program this system would run: a regular file
// with an execute bit on Unix; on Windows, which keeps no execute bits, a
// regular file whose extension runs (.exe, .com, .bat, .cmd).
func IsExecutable(path string, fi os.FileInfo) bool { return isExecutable(path, fi) }

// IsTerminal reports whether f is a terminal: tcgetattr(3) succeeds on it
// (a character device such as /dev/null is not one).
func IsTerminal(f *os.File) bool { return isTerminal(f) }

// Kernel is the kernel's release and version as uname(2) gives them
// ("6.8.0-45-generic #45-Ubuntu SMP …"), "" where it fails.
func Kernel() string { return kernel() }

// MachineID is this machine's id, machine-id(5); "" where it has none.
func MachineID() string { return machineID() }

// OpenBeneath opens the regular file rel below dir for reading as
// ReadBeneath does (no symbolic link below dir followed, never blocking, a
// regular file of owner's unless AnyOwner) and returns it open: for a file
// another library reads through the descriptor, never by name again.
func OpenBeneath(dir, rel string, owner int) (*os.File, error) { return openBeneathOS(dir, rel, owner) }

// OpenDir opens the directory path for listing: never a symbolic link at
// its end, never anything but a directory, and never blocking (a FIFO a
// user put where a directory should be fails at once, ENOTDIR).
func OpenDir(path string) (*os.File, error) { return openDirOS(path) }

// OpenDirNoLinks opens the directory at the absolute path for reading,
// reached from / one component at a time with O_NOFOLLOW|O_DIRECTORY: a
// symbolic link anywhere on the way is refused (ErrSymlink), so a user
// who swaps a directory of theirs on the way for a link cannot make root
// open another one. Unless owner is AnyOwner the directory must be that
// uid's (ErrNotOwner). It returns the descriptor, which the caller closes.
func OpenDirNoLinks(path string, owner int) (int, error) { return openDirNoLinks(path, owner) }

// OpenForks subscribes to the host's fork events: every event first
// (PROC_CN_MCAST_LISTEN alone, which every kernel acknowledges at once —
// with its refusal, if it refuses), then forks alone (struct proc_input's
// event_type, Linux 6.6 and later: exec, exit and the rest are no longer
// sent to this socket). A kernel before 6.6 ignores the second message and
// keeps sending every event; one after filters out its acknowledgement
// too (measured on 6.18), so none is waited for.
func OpenForks() (*Forks, error) { return openForks() }

// OpenLastPID opens this namespace's ns_last_pid.
func OpenLastPID() (*LastPID, error) { return openLastPID() }

// OpenOwn opens one of reaper's own files — its lock, the record of what
// a reap stopped, the respawn record, the notifier's seen-file — which
// may sit in a directory others can write (a --lock-file beside a user's).
// It is the one rule for them, so that no path there can make reaper
// block, follow a link, or write a file that is not its own:
//
//   - never through a symbolic link at the last component (O_NOFOLLOW);
//   - never blocking in open(2): O_NONBLOCK, so a FIFO opens at once or
//     fails (ENXIO for a writer without reader, fifo(7)) instead of
//     waiting for its other end, where no deadline and no SIGTERM could
//     end the wait — and a missing file is made with O_CREAT|O_EXCL, which
//     never opens what another user put there meanwhile
//     (fs.protected_fifos=0 lets root's plain O_CREAT open a user's FIFO);
//   - checked after the open, by fstat(2) of the descriptor: a regular
//     file of this process's euid with one link, else refused with
//     ErrNotOwn and the reason, and closed.
//
// Only then is an OwnTruncate file emptied.
func OpenOwn(path string, how OwnOpen) (*os.File, error) { return openOwn(path, how) }

// PIDNamespace names this process's PID namespace as the kernel links it,
// "pid:[<inode>]" (namespaces(7)); "" where it cannot be read.
func PIDNamespace() string { return pIDNamespace() }

// PathSpeaker is the user a path speaks for, as root must take it before
// it reads or writes there on someone's behalf (a client's settings under
// a $HOME that sudo kept, a hook's file): the owner of the first component
// on the way from / that is not root's — looked at with lstat(2), so a
// symbolic link counts as its own owner's and is not followed — and that
// owner's group (the component's gid). Root must act there only as that
// user, in a child the kernel bounds: a link the user planted on the way
// (~/.claude/settings.json -> /etc/docker/daemon.json, ~/.gemini ->
// /etc/cron.d) then leads where the user could write anyway, and nowhere
// else.
//
// A path whose every existing component is root's speaks for root (uid 0)
// only when no one else can change what it names: an error says who could
// where a directory on the way is writable by another user (the sticky
// bit, sticky(7)'s restricted deletion, protects an existing entry of
// root's, not a name still to be made). Root's own links are root's word;
// what they lead to is checked the same way, once resolved.
func PathSpeaker(path string) (uid, gid uint32, err error) { return pathSpeaker(path) }

// ReadBeneath reads the regular file rel below the directory dir, as
// ReadFile does, and more strictly: no symbolic link below dir is followed
// (each component is opened O_NOFOLLOW relative to the one before, which
// Linux's openat2 RESOLVE_NO_SYMLINKS does in one call where it exists), and
// unless owner is AnyOwner the file must belong to that uid. It is how a
// root reaper reads a user's state: a link to /etc/shadow, a hard link to
// another user's file, a FIFO or /dev/zero in place of a lease file are
// each refused, and the error never quotes the file.
func ReadBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
	return readBeneath(dir, rel, max, owner)
}

// ReadFile reads the regular file at path, of at most max bytes, without
// ever blocking in open(2) or read(2): it is opened O_NONBLOCK, so a FIFO
// opens at once instead of waiting for a writer (fifo(7)), and fstat(2) on
// the open descriptor must say it is a regular file within the cap before
// a byte is read. The last component may be a symbolic link (an
// administrator's /etc/reaper/policy.toml may be one); what it names must
// be a regular file.
func ReadFile(path string, max int64) ([]byte, error) { return readFile(path, max) }

// ReadFileOwner is ReadFile, and also returns the uid that owns the file
// read (by fstat of the descriptor read, not by name again): whose word
// the file is.
func ReadFileOwner(path string, max int64) ([]byte, uint32, error) { return readFileOwner(path, max) }

// ReadOwn reads one of reaper's own files, opened as OpenOwn opens it,
// of at most max bytes.
func ReadOwn(path string, max int64) ([]byte, error) { return readOwn(path, max) }

// ReadSnapshot reads the whole process table under root (normally /proc; a
// fixture directory in tests). Every process costs one openat+read+close of
// its stat file; nothing else is read until asked — not even who owns it
// (Snapshot.Owner, Snapshot.UID). A fixture's owners are read with the
// table: one fstat of each stat file.
//
// The snapshot keeps root open for on-demand reads: call Close.
func ReadSnapshot(root string) (*Snapshot, error) { return readSnapshot(root) }

// RecordOwnerLive reports whether the process at pid now can be the one
// that wrote a record of user uid last changed at written: it lives (not a
// zombie), its real uid is uid or root's (proc(5) /proc/PID/status, not
// the owner of /proc/PID, which a non-dumpable process leaves root's), and
// it started no later than the record was written (two seconds of slack
// for the tick-granular start and the clock's). Any other process at the pid — another user's
// that took it after the writer died, or a later one — is no proof the
// writer lives, and a record's chooser must not spend its bound on it
// (scan.OwnerGone is the same rule over a snapshot).
func RecordOwnerLive(pid int, uid uint32, written time.Time) bool {
	return recordOwnerLive(pid, uid, written)
}

// Stamp returns the open file's FileStamp, from fstat(2).
func Stamp(f *os.File) (FileStamp, error) { return stamp(f) }

// StartIdentity returns the start identity of the live process pid,
// "<boot_id>:<starttime>": what a supervisor writes into its ledger right
// after spawning a child, and what the reaper compares before believing a
// ledger's pid.
func StartIdentity(pid int) (string, error) { return startIdentity(pid) }

// StatID returns the identity and owner of the file at path, following a
// link as stat(2) does.
func StatID(path string) (FileID, bool) { return statID(path) }

// TermWidth is the terminal f's width in columns (TIOCGWINSZ, tty_ioctl(4)),
// 0 when f is no terminal or the terminal has no size (a new
// pseudo-terminal's 0×0).
func TermWidth(f *os.File) int { return termWidth(f) }

// TryLock takes an exclusive flock(2) on f without waiting: false when
// another open file description holds it.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// WhoCanReplace says how a user other than root could replace what runs
// as the file at path — by writing the file, or by renaming or removing
// it or any directory above it, which rename(2) and unlink(2) allow to
// whoever may write the directory (the sticky bit aside: then only the
// entry's owner, the directory's, or root) — or "" when only root can.
// Every component from the file up to / must be root's and writable by
// no one else: group write is allowed only to group 0, and an access ACL
// entry that grants write to another user or group is refused on Linux
// (acl(5): the mode's group bits are then the ACL's mask, and a
// "u:alice:rwx" entry hides behind drwxrwxr-x root:root). A symbolic link on
// the way is refused, not followed: the caller resolves the path first,
// so that what is checked is what runs. It is how a root service refuses
// a binary that `go install` or npm put in a user's directory: whoever
// can replace it runs code as root at the next start.
func WhoCanReplace(path string) (string, error) { return whoCanReplace(path) }

// Writable reports, as access(2) does for the real uid, whether this
// process may create files in dir.
func Writable(dir string) error { return writable(dir) }

// WriteOwn replaces one of reaper's own files at path with data, by
// WriteFileAtomic: a new file renamed over the name, so nothing that
// sits at path is ever opened or written through. What is there must be
// the reaper's own by OpenOwn's rule (looked at with lstat(2), no link
// followed) or nothing; anything else is refused and left as it is.
func WriteOwn(path string, data []byte, perm os.FileMode) error { return writeOwn(path, data, perm) }

// ReadCmdline reads the command line of the live process pid from
// /proc/PID/cmdline (proc(5)), its first MaxDetail bytes (the process's
// owner makes it as long as their stack limit allows): empty for a kernel
// thread or a zombie.
func ReadCmdline(pid int) ([]string, error) { return readCmdline(pid) }

// Family is an init's tree as its watch needs it: the init's children,
// and the processes below it that have children of their own — whose
// exit makes those children the init's, which no signal tells it.
type Family struct {
	Children map[int]bool
	Parents  []Process
}

// ReadFamily reads pid's Family: down the tree from pid by each
// process's /proc/PID/task/*/children where the kernel has them, else
// from the whole table's parents.
func ReadFamily(pid int) Family { return readFamily(pid) }

// ReadStat reads /proc/PID/stat of the live system, alone: the one process
// the kill path re-proves, or a sample's.
func ReadStat(pid int) (*Process, error) { return readStat(pid) }

// ReadUID is pid's real uid (/proc/PID/status), alone: a storm's parent.
func ReadUID(pid int) (uint32, error) { return readUID(pid) }

// Close ends the subscription.
func (f *Forks) Close() error { return f.close() }

// Drain reads every event there is, without waiting, and gives each fork
// of a process (not a thread: a child whose pid is its tgid) to fork, by
// the parent process's and the child's pids. Read between waits, a
// storm's events cost a read each and no wakeup each.
func (f *Forks) Drain(buf []byte, fork func(parent, child int)) error { return f.drain(buf, fork) }

// Wait waits up to timeout for an event to read (poll(2)); it reports
// whether one is there. A host where nothing forks costs no wakeup but
// the timeout's.
func (f *Forks) Wait(timeout time.Duration) (bool, error) { return f.wait(timeout) }

// Close is Linux's alone.
func (l *LastPID) Close() error { return l.close() }

// Read reads the last pid now.
func (l *LastPID) Read() (int, error) { return l.read() }

// NamespaceInit reports whether p is the init of a PID namespace below
// this one — a container's PID 1, seen from the host: the last pid of the
// NSpid line of its status is 1 (proc(5), Linux 4.1+). Such a process
// adopts the orphans of its namespace as PID 1 does the host's.
func (s *Snapshot) NamespaceInit(p *Process) bool { return s.namespaceInit(p) }

// PIDsLimit is the tightest pids controller limit over p's cgroup and its
// ancestors (pids.max, pids.current: cgroup-v2(7), or the v1 pids
// hierarchy; a user's slice's is systemd's TasksMax): the limit, what is
// counted against it, and the cgroup, for the one with the least room; 0
// when none is set or none can be read. The count is of tasks, threads
// included, and a zombie counts until it is reaped.
func (s *Snapshot) PIDsLimit(p *Process) (limit, current uint64, path string) { return s.pidsLimit(p) }

// PSS is p's proportional set size (the Pss line of
// /proc/PID/smaps_rollup, Linux 4.14+, proc(5)): its resident pages, each
// shared page divided among the processes that map it. Unlike RSS, the
// PSS of a tree's processes adds up to what their exit frees, shared
// libraries and forked copies counted once. It needs ptrace read access,
// as the environment does; the start time is checked after the read, so
// a reused pid's figure is never taken for p's.
func (s *Snapshot) PSS(p *Process) (uint64, error) { return s.pss(p) }

// PTYHolds lists the pseudo-terminals p holds, from its fd links: a link
// to /dev/ptmx (or /dev/pts/ptmx) is a master, whose slave's number is the
// tty-index of its fdinfo; a link to /dev/pts/N is a slave. Reading another
// user's fds needs ptrace access (same uid, or CAP_SYS_PTRACE).
func (s *Snapshot) PTYHolds(p *Process) ([]PTYHold, error) { return s.ptyHolds(p) }

// ProcessLimit is the most processes one user may run here:
// kern.maxprocperuid (sysctl(3)), which fork(2) checks for every user but
// root. A process's own RLIMIT_NPROC, which may be lower, is not readable
// from another process on this platform.
func (s *Snapshot) ProcessLimit(p *Process) uint64 { return s.processLimit(p) }

// ReadStdin reads what p's fd 0 is, and asks the kernel whether anyone can
// still write to it: pidfd_open(2), pidfd_getfd(2) for a duplicate of its
// fd 0 (Linux 5.6+; ptrace attach access: root, or the same user where
// Yama allows it), and poll(2) with no wait. The duplicate is closed at
// once: it reads nothing and changes nothing for p. A fixture (Self 0)
// has no fds.
//
// The start time is not read again: were p's pid reused since the table,
// the answer would be about another process, and it only ever adds a
// reason to a finding of p (whose reap re-proves p's identity before any
// signal, and finds it gone) or takes one away (in use). Nine syscalls
// for each of a thousand abandoned servers was the scan's largest cost;
// the check would add three.
func (s *Snapshot) ReadStdin(p *Process) (Stdin, error) { return s.readStdin(p) }

// ReadStdout reads what p's fd 1 is, and asks the kernel, as ReadStdin
// does, whether anyone can still read it: Closed when no process holds
// the read end of its pipe (poll(2) on a pipe's write end reports
// POLLERR when it has no reader: pipe_poll in fs/pipe.c), or its socket's
// other end is closed (POLLHUP). A headless client whose output goes
// nowhere any more. A file, a terminal or /dev/null: no claim.
func (s *Snapshot) ReadStdout(p *Process) (Stdin, error) { return s.readStdout(p) }

// SampleProcess reads p's CPU time, I/O counters and terminal mtime now,
// if it is still the process the snapshot saw.
func (s *Snapshot) SampleProcess(p *Process) (Sample, error) { return s.sampleProcess(p) }

// StdinWriters finds, among procs in their order, who holds a way to
// write to each of sts (keyed by its Inode): for a pipe, an fd of the same
// pipe open for writing (its fdinfo flags); for a socket, an fd of its
// peer. Every link is read once, for all of sts, and the search stops as
// soon as enough says the writers found are enough (nil: never). Reading
// another user's fds needs ptrace read access; the processes whose fds
// could not be read, or not all of them (past maxFDs links of one process,
// or maxLinks in all), are counted in unread: a search with unread > 0 did
// not look everywhere, and what it did not find is not proven absent. A
// process with a hundred thousand sockets costs a bounded pass.
func (s *Snapshot) StdinWriters(sts []Stdin, procs []*Process, enough func(map[uint64][]Writer) bool) (w map[uint64][]Writer, unread int) {
	return s.stdinWriters(sts, procs, enough)
}

// Wchan is the kernel function p sleeps in (/proc/PID/wchan), "" when it
// is not asleep or that is not shown (kernel.kptr_restrict, no
// CONFIG_KALLSYMS: "0").
func (s *Snapshot) Wchan(p *Process) string { return s.wchan(p) }

// EUID is the uid this reaper acts as: the effective uid on Unix; on
// Windows the relative id of its token's user SID (never 0: an
// administrator's reaper is one user's there until it can read each
// user's state as that user).
func EUID() uint32 { return euid() }

// OwnUsage is what the reaper process itself uses, for its own metrics
// series: each field is zero where the OS does not say it cheaply.
type OwnUsage struct {
	CPUSeconds float64   // user and system CPU time
	RSS        uint64    // resident memory now, bytes
	PeakRSS    uint64    // the most resident memory so far, bytes
	Virtual    uint64    // virtual memory (Windows: private bytes), bytes
	Start      time.Time // when the process started
	OpenFDs    int       // descriptors (Windows: handles) open now
	MaxFDs     uint64    // the soft limit of open descriptors
}

// ReadOwnUsage reads the reaper process's own usage: a few small reads
// of its own (/proc/self on Linux, getrusage on the BSDs and macOS,
// GetProcessTimes and GetProcessMemoryInfo on Windows).
func ReadOwnUsage() (OwnUsage, error) { return readOwnUsage() }
