package platform

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"
	"sync"
)

// detail names one on-demand file.
type detail uint16

const (
	detailCmdline detail = 1 << iota
	detailEnviron
	detailCgroup
	detailStdio
	detailStatus
	// detailOwner: the owner of the process's /proc dir (Owner).
	detailOwner
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
	// missed marks a detail asked while the snapshot was frozen and not
	// loaded (Freeze): what the decision read of p is not all there is.
	missed
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

// detailReader reads the on-demand files of one process.
type detailReader interface {
	read(pid int, what detail) ([]byte, error)
	// fork returns a reader with buffers of its own, for another goroutine.
	fork() detailReader
}

// KeepEnv limits what is kept of the environments read from now on to the
// named variables: an environment is kilobytes, a table's candidates are
// thousands, and the scan and policy look up a handful of names. Getenv of
// another name reads that process's environment again, so no lookup is
// ever answered wrongly.
func (s *Snapshot) KeepEnv(names []string) {
	s.keepEnv = map[string]bool{}
	for _, n := range names {
		s.keepEnv[s.envKey(n)] = true
	}
	s.env = nil
}

// envKey is how a variable's name is compared on this table: as it is on
// Unix; on Windows, whose names are case-insensitive (Path is PATH), in
// upper case.
func (s *Snapshot) envKey(name string) string {
	if s.NoReparenting {
		return strings.ToUpper(name)
	}
	return name
}

// lookupEnv is LookupEnv with the table's names: on Windows, the first
// entry whose name equals name but for case.
func (s *Snapshot) lookupEnv(environ, name string) (string, bool) {
	if !s.NoReparenting {
		return LookupEnv(environ, name)
	}
	for entry := range strings.SplitSeq(environ, "\x00") {
		if eq := strings.IndexByte(entry, '='); eq > 0 && strings.EqualFold(entry[:eq], name) {
			return entry[eq+1:], true
		}
	}
	return "", false
}

// envKeeper keeps what KeepEnv names of raw environments. Processes mostly
// inherit one environment, so what is kept of theirs is mostly the same
// bytes: each distinct value is stored once and shared (measured: 2,000
// orphans of one shell, 876 KiB allocated → one copy). A keeper serves one
// goroutine; Prefetch gives each worker its own.
type envKeeper struct {
	names map[string]bool // nil: keep everything
	fold  bool            // a Windows table's: names compared in upper case
	buf   []byte          // scratch for the kept entries
	seen  map[string]string
}

func (s *Snapshot) newEnvKeeper() *envKeeper {
	return &envKeeper{names: s.keepEnv, fold: s.NoReparenting, seen: map[string]string{}}
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
			if eq := bytes.IndexByte(entry, '='); eq > 0 && k.kept(entry[:eq]) {
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

// kept reports whether KeepEnv named the variable name.
func (k *envKeeper) kept(name []byte) bool {
	if k.fold {
		return k.names[strings.ToUpper(string(name))]
	}
	return k.names[string(name)]
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
	if s.keepEnv != nil && !s.keepEnv[s.envKey(name)] && s.reader != nil && !p.KernelThread() && !p.Zombie() {
		if s.frozen {
			s.miss(p, detailEnviron)
			return "", false
		}
		b, err := s.readDetail(p.PID, detailEnviron)
		if err != nil {
			return "", false
		}
		b, _ = capDetail(b, detailEnviron)
		return s.lookupEnv(string(b), name)
	}
	return s.lookupEnv(s.environ(p), name)
}

func (s *Snapshot) environ(p *Process) string {
	if s.load(p, detailEnviron) {
		b, err := s.readDetail(p.PID, detailEnviron)
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
	if s.lazyOwners && !s.statusUID {
		return s.Owner(p) // Windows: the token's user is the one owner there is
	}
	if !s.statusUID || p.loaded&detailStatus != 0 || p.KernelThread() {
		return p.UID
	}
	if s.frozen {
		s.miss(p, detailStatus)
		return NoUID // not loaded: nobody's, as an unreadable status is
	}
	p.loaded |= detailStatus
	b, err := s.readDetail(p.PID, detailStatus)
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

// readDetail reads one on-demand file of one process for the lazy
// accessors, and counts it (Reads).
func (s *Snapshot) readDetail(pid int, d detail) ([]byte, error) {
	s.reads++
	return s.reader.read(pid, d)
}

// Freeze makes the snapshot a value until thaw is called: a lazy accessor
// (Cmdline, Getenv, UID, Cgroup) then answers from what is loaded and
// reads nothing. A detail asked and not loaded is a miss: it answers
// empty (a uid: NoUID, nobody's), counts (Misses), and marks the process
// so that nothing is acted on from what was read of it (ReadInPart). Under
// test a miss panics, so that every test that decides proves the decision
// reads nothing the pass did not load first (Load).
func (s *Snapshot) Freeze() (thaw func()) {
	s.frozen = true
	return func() { s.frozen = false }
}

// Misses counts the details asked while the snapshot was frozen and not
// loaded.
func (s *Snapshot) Misses() int { return s.misses }

// miss counts a detail asked while frozen, and fails under test.
func (s *Snapshot) miss(p *Process, d detail) {
	s.misses++
	p.loaded |= missed
	if underTest() {
		panic(fmt.Sprintf("platform: pid %d's %s asked while the snapshot is frozen, and not loaded before (Load)", p.PID, detailName(d)))
	}
}

// underTest reports whether this is a test binary: the testing package
// registers its flags (test.v) before any test runs. It is asked this
// way, not with testing.Testing, which would link the testing package —
// its init and its flags — into reaper itself.
func underTest() bool { return flag.Lookup("test.v") != nil }

// detailName names d for a miss.
func detailName(d detail) string {
	switch d {
	case detailCmdline:
		return "command line"
	case detailEnviron:
		return "environment"
	case detailCgroup:
		return "cgroup"
	case detailStatus:
		return "uid (status)"
	case detailOwner:
		return "owner (/proc entry)"
	}
	return fmt.Sprintf("detail %#x", uint16(d))
}

// Reads counts the files the lazy accessors (Cmdline, Getenv, UID,
// Cgroup) have read: a pass loads what its decision needs first (Load),
// and its tests check that deciding reads nothing after.
func (s *Snapshot) Reads() int { return s.reads }

// Load reads now what policy asks of procs — command line, environment,
// cgroup, and with uids their real uids — those not read yet: the pass's
// one read after the table, so that matching rules and deciding read
// nothing.
func (s *Snapshot) Load(procs []*Process, uids bool) {
	s.Prefetch(procs)
	for _, p := range procs {
		s.Cmdline(p)
		s.Cgroup(p)
		s.environ(p)
		if uids {
			s.UID(p)
		}
	}
}

// load marks d as loaded for p and reports whether it must be read now.
func (s *Snapshot) load(p *Process, d detail) bool {
	if p.loaded&d != 0 {
		return false
	}
	if s.frozen && s.reader != nil && !p.KernelThread() && !p.Zombie() {
		s.miss(p, d)
		return false
	}
	p.loaded |= d
	return s.reader != nil && !p.KernelThread() && !p.Zombie()
}

func (s *Snapshot) raw(p *Process, d detail) []byte {
	b, err := s.readDetail(p.PID, d)
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
	if p.loaded&missed != 0 {
		return "its details were not read before the decision"
	}
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
