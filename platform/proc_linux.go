package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultProcRoot is where procfs is mounted.
const DefaultProcRoot = "/proc"

// procPath is file of pid in the live procfs: the paths of the live-only
// reads (signalling, sampling, cgroups), which never go to a fixture.
func procPath(pid int, file string) string {
	return DefaultProcRoot + "/" + strconv.Itoa(pid) + "/" + file
}

func readSnapshot(root string) (*Snapshot, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open process table %s: %w", root, err)
	}
	pr := &procReader{fd: fd, root: root, buf: make([]byte, 4096)}
	s := &Snapshot{
		ClockTicks: clockTicks(),
		Taken:      time.Now(),
		reader:     pr,
		closer:     func() error { return unix.Close(fd) },
	}
	if err := pr.readHeader(s); err != nil {
		s.Close()
		return nil, err
	}
	// A fixture is small and only ever scanned: its owners come with the
	// table. The live table's are read when asked (Owner).
	s.lazyOwners = s.Self != 0
	if err := pr.readAll(s); err != nil {
		s.Close()
		return nil, err
	}
	s.readPipeline()
	return s, nil
}

// procReader reads files under one open proc directory.
type procReader struct {
	fd   int
	root string
	buf  []byte // reused by every small read
	big  []byte // reused by details, which can be up to ARG_MAX
	path [64]byte
}

// readHeader reads the per-boot facts: boot id, uptime, PTY counts, and
// whether root is the procfs of our own pid namespace (then Self is set).
func (pr *procReader) readHeader(s *Snapshot) error {
	b, err := pr.readSmall("sys/kernel/random/boot_id")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is not a process table: it has no sys/kernel/random/boot_id, which a procfs has, and so does each fixture of testdata/proc", pr.root)
		}
		return fmt.Errorf("read boot id under %s: %w", pr.root, err)
	}
	s.BootID = string(bytes.TrimSpace(b))
	b, err = pr.readSmall("uptime")
	if err != nil {
		return fmt.Errorf("read %s/uptime: %w", pr.root, err)
	}
	up, err := parseUptime(b)
	if err != nil {
		return fmt.Errorf("%s/uptime: %w", pr.root, err)
	}
	s.Uptime = up
	nr, errNr := pr.readInt("sys/kernel/pty/nr")
	max, errMax := pr.readInt("sys/kernel/pty/max")
	if errNr == nil && errMax == nil {
		s.PTY = PTYUsage{InUse: nr, Max: max}
	}
	var link [32]byte
	if n, err := unix.Readlinkat(pr.fd, "self", link[:]); err == nil {
		if string(link[:n]) == strconv.Itoa(os.Getpid()) {
			s.Self = os.Getpid()
			// Our own procfs: the cgroup hierarchy is the host's too. A
			// fixture tree is only ever scanned, never acted on.
			s.cgroupProcs = readCgroupProcs
		}
	}
	// Who owns a process is read from its status; a fixture's process
	// without one keeps the owner of its directory (Snapshot.UID).
	s.statusUID = true
	s.FixtureUID = NoUID
	if s.Self == 0 {
		if b, err := pr.readSmall("self/status"); err == nil {
			if uid, ok := ParseStatusUID(b); ok {
				s.FixtureUID = uid
			}
		}
	}
	return nil
}

// readAll lists the pids in the proc directory, then reads each one's stat.
// Listing first lets the table be allocated once at its final size. Large
// tables are read by up to statWorkers goroutines over disjoint ranges:
// the cost is almost all in the kernel (path lookup and seq_file output),
// which runs in parallel on separate cores.
func (pr *procReader) readAll(s *Snapshot) error {
	pids, err := pr.listPIDs()
	if err != nil {
		return err
	}
	s.Procs = make([]Process, len(pids))
	workers := statGoroutines(len(pids))
	counts := make([]statCounts, workers)
	var wg sync.WaitGroup
	// Blocks of the list handed out in turn, not one range a goroutine:
	// processes differ in cost (a thread group's stat sums its threads),
	// and another process's work can take a core for a while — with one
	// range each, one goroutine was seen reading alone for a third of the
	// pass (58 against 92 ms at 10,000 processes).
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		sr := &statReader{fd: pr.fd, root: pr.root, pageSize: uint64(os.Getpagesize()), comms: map[string]string{}, owners: !s.lazyOwners}
		if w == 0 {
			sr.buf = pr.buf
		} else {
			sr.buf = make([]byte, len(pr.buf))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(statBlock)) - statBlock
				if lo >= len(pids) {
					return
				}
				hi := min(lo+statBlock, len(pids))
				c := sr.readRange(pids[lo:hi], s.Procs[lo:hi])
				counts[w].unreadable += c.unreadable
				counts[w].malformed += c.malformed
			}
		}()
	}
	wg.Wait()
	// Compact away the processes that vanished or failed (PID left 0).
	n, unreadable, malformed := 0, 0, 0
	for i := range s.Procs {
		if s.Procs[i].PID != 0 {
			s.Procs[n] = s.Procs[i]
			n++
		}
	}
	for _, c := range counts {
		unreadable += c.unreadable
		malformed += c.malformed
	}
	clear(s.Procs[n:])
	s.Procs = s.Procs[:n]
	if unreadable > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d processes could not be read (hidepid or permissions); their children show as unknown", unreadable))
	}
	if malformed > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d processes had a stat file that did not parse", malformed))
	}
	sortProcs(s.Procs)
	return nil
}

const (
	// statWorkers bounds the goroutines of the stat pass. Measured on two
	// cores, two cut the wall time of a 10,000-process read by about a
	// fifth for a tenth more CPU (measured with scripts/bench-scan.sh).
	statWorkers = 4
	// parallelAbove is the table size below which one goroutine is as
	// fast: on two cores two cut a 1,000-process scan from 22.7 to 19.1 ms
	// and made a 370-process one no slower (10.5 → 10.3 ms).
	parallelAbove = 256
	// statBlock is how many pids a goroutine of the stat pass takes at a
	// time.
	statBlock = 64
)

// statGoroutines is how many goroutines read n processes' files.
func statGoroutines(n int) int {
	if n < parallelAbove {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), statWorkers)
}

type statCounts struct{ unreadable, malformed int }

// statReader reads stat files for one goroutine of the stat pass.
type statReader struct {
	fd       int
	root     string
	pageSize uint64
	buf      []byte
	path     [32]byte
	comms    map[string]string // interned process names (parseStat)
	// owners: take each process's owner with its stat file (a fixture's
	// table); otherwise Snapshot.Owner reads it when asked.
	owners bool
}

// readRange reads the stat of each pid into the matching slot of out; a
// slot whose process is gone or unreadable keeps PID 0.
func (sr *statReader) readRange(pids []int32, out []Process) statCounts {
	var c statCounts
	for i, pid := range pids {
		err := sr.readStat(int(pid), &out[i])
		if err == nil {
			continue
		}
		out[i] = Process{}
		switch {
		case isGone(err):
			// Exited while we listed: not part of the table any more.
		case errors.Is(err, ErrMalformed):
			c.malformed++
		default:
			c.unreadable++
		}
	}
	return c
}

// listPIDs reads the numeric entries of the proc directory with getdents64.
func (pr *procReader) listPIDs() ([]int32, error) {
	dents := make([]byte, 64<<10)
	pids := make([]int32, 0, 1024)
	for {
		n, err := unix.Getdents(pr.fd, dents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", pr.root, err)
		}
		if n == 0 {
			return pids, nil
		}
		// struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2),
		// d_type (1), then the NUL-terminated name (getdents64(2)).
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(dents[off+16:]))
			if reclen == 0 {
				break
			}
			name := dents[off+19 : off+reclen]
			off += reclen
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if pid, ok := atoiPid(name); ok {
				pids = append(pids, int32(pid))
			}
		}
	}
}

// readStat reads PID/stat with a raw openat relative to the proc directory:
// os.Open costs three times the syscalls (non-blocking probes, epoll
// registration) and allocates, which dominates a 10,000-process scan.
func (sr *statReader) readStat(pid int, p *Process) error {
	path := strconv.AppendInt(sr.path[:0], int64(pid), 10)
	path = append(path, "/stat\x00"...)
	fd, err := openat(sr.fd, path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	n, err := readLine(fd, sr.buf)
	if err != nil {
		return err
	}
	if err := parseStat(sr.buf[:n], sr.pageSize, p, sr.comms); err != nil {
		return fmt.Errorf("%s/%d/stat: %w", sr.root, pid, err)
	}
	if p.PID != pid {
		return fmt.Errorf("%s/%d/stat names pid %d: %w", sr.root, pid, p.PID, ErrMalformed)
	}
	switch {
	case sr.owners:
		// The owner of the stat file: a fixture's directory says it.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		p.UID = st.Uid
	case p.KernelThread():
		p.UID = 0
	default:
		p.UID = NoUID // not read yet: nobody's, until Owner or UID reads it
	}
	return nil
}

// owner implements ownerReader: the owner of /proc/PID, with one statx
// relative to the proc directory (no path string made, as openat).
func (pr *procReader) owner(pid int) (uint32, error) {
	path := strconv.AppendInt(pr.path[:0], int64(pid), 10)
	path = append(path, 0)
	var stx unix.Statx_t
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(pr.fd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(unix.AT_SYMLINK_NOFOLLOW), uintptr(unix.STATX_UID), uintptr(unsafe.Pointer(&stx)), 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return NoUID, errno
		case stx.Mask&unix.STATX_UID == 0:
			return NoUID, fmt.Errorf("%s/%d: statx gave no uid", pr.root, pid)
		}
		return stx.Uid, nil
	}
}

// fork implements detailReader: the same directory, buffers of its own.
func (pr *procReader) fork() detailReader {
	return &procReader{fd: pr.fd, root: pr.root, buf: make([]byte, len(pr.buf))}
}

// read implements detailReader: one on-demand file of one process.
func (pr *procReader) read(pid int, what detail) ([]byte, error) {
	var file string
	switch what {
	case detailCmdline:
		file = "cmdline"
	case detailEnviron:
		file = "environ"
	case detailCgroup:
		file = "cgroup"
	case detailStatus:
		file = "status"
	case detailStdio:
		return pr.readStdio(pid)
	default:
		return nil, fmt.Errorf("unknown detail %d", what)
	}
	path := strconv.AppendInt(pr.path[:0], int64(pid), 10)
	path = append(append(append(path, '/'), file...), 0)
	fd, err := openat(pr.fd, path)
	if err != nil {
		return nil, fmt.Errorf("read %s/%d/%s: %w", pr.root, pid, file, err)
	}
	defer unix.Close(fd)
	if pr.big == nil {
		pr.big = make([]byte, 16<<10)
	}
	// A command line or environment is read up to one byte past
	// MaxDetail, enough for the snapshot to know it was longer: the rest
	// is never read (each page of another process's memory is a copy in
	// the kernel, access_remote_vm).
	limit := -1
	if what == detailCmdline || what == detailEnviron {
		limit = MaxDetail + 1
	}
	total := 0
	for {
		if total == limit {
			return pr.big[:total], nil
		}
		if total == len(pr.big) {
			pr.big = append(pr.big, make([]byte, len(pr.big))...)
		}
		buf := pr.big[total:]
		if limit > 0 && len(buf) > limit-total {
			buf = buf[:limit-total]
		}
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s/%d/%s: %w", pr.root, pid, file, err)
		}
		if n == 0 {
			return pr.big[:total], nil
		}
		total += n
	}
}

// readStdio returns the target of the first of fd 0, 1, 2 that is a
// terminal, or nothing.
func (pr *procReader) readStdio(pid int) ([]byte, error) {
	var link [128]byte
	var lastErr error
	for fd := 0; fd <= 2; fd++ {
		n, err := unix.Readlinkat(pr.fd, strconv.Itoa(pid)+"/fd/"+strconv.Itoa(fd), link[:])
		if err != nil {
			lastErr = fmt.Errorf("read %s/%d/fd/%d: %w", pr.root, pid, fd, err)
			continue
		}
		if bytes.HasPrefix(link[:n], []byte("/dev/pts/")) {
			return append([]byte(nil), link[:n]...), nil
		}
		lastErr = nil
	}
	if lastErr != nil && isGone(lastErr) {
		return nil, lastErr
	}
	return nil, nil
}

func (pr *procReader) readSmall(name string) ([]byte, error) {
	path := append(append(pr.path[:0], name...), 0)
	fd, err := openat(pr.fd, path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n, err := readLine(fd, pr.buf)
	return pr.buf[:n], err
}

func (pr *procReader) readInt(name string) (int, error) {
	b, err := pr.readSmall(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(bytes.TrimSpace(b)))
}

// openat opens a NUL-terminated path relative to dirfd without converting a
// Go string (which would allocate on every call of the hot path).
func openat(dirfd int, path []byte) (int, error) {
	for {
		r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd),
			uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(r), nil
	}
}

// readLine reads a one-line procfs file (stat, uptime, boot_id, the pty
// counters), stopping at the newline: these are seq_files that return their
// whole content in the first read when the buffer is large enough, so a
// second read only to see EOF would cost a syscall per process.
func readLine(fd int, buf []byte) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := unix.Read(fd, buf[total:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 || buf[total-1] == '\n' {
			break
		}
	}
	return total, nil
}

// clockTicks returns USER_HZ, the unit of the time fields in /proc/PID/stat,
// read once: it does not change while the process runs.
var clockTicks = sync.OnceValue(readClockTicks)

// readClockTicks reads USER_HZ. sysconf(_SC_CLK_TCK) needs libc; the kernel
// hands the same value to every process in its auxiliary vector as
// AT_CLKTCK (getauxval(3)).
func readClockTicks() uint64 {
	const atClktck = 17
	b, err := os.ReadFile(DefaultProcRoot + "/self/auxv")
	if err == nil && unsafe.Sizeof(uintptr(0)) == 8 {
		for i := 0; i+16 <= len(b); i += 16 {
			key := binary.NativeEndian.Uint64(b[i:])
			if key == atClktck {
				if v := binary.NativeEndian.Uint64(b[i+8:]); v > 0 {
					return v
				}
			}
		}
	}
	return 100 // USER_HZ on every architecture Linux supports today
}

// atoiPid parses a directory name that is a pid; other entries are not.
func atoiPid(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 || b[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n > 0
}

func readStat(pid int) (*Process, error) {
	b, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return nil, err
	}
	var p Process
	if err := ParseStat(b, uint64(os.Getpagesize()), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ProcPath is the path of one of pid's files in the live /proc.
func ProcPath(pid int, file string) string { return procPath(pid, file) }
