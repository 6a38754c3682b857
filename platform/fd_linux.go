package platform

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PTYHolds lists the pseudo-terminals p holds, from its fd links: a link
// to /dev/ptmx (or /dev/pts/ptmx) is a master, whose slave's number is the
// tty-index of its fdinfo; a link to /dev/pts/N is a slave. Reading another
// user's fds needs ptrace access (same uid, or CAP_SYS_PTRACE).
func (s *Snapshot) PTYHolds(p *Process) ([]PTYHold, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return nil, nil // a fixture has no fds to read
	}
	dir := DefaultProcRoot + "/" + strconv.Itoa(p.PID)
	ents, err := os.ReadDir(dir + "/fd")
	if err != nil {
		if isGone(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pty holds of %d: %w", p.PID, err)
	}
	seen := map[PTYHold]bool{}
	var holds []PTYHold
	for _, e := range ents {
		link, err := os.Readlink(dir + "/fd/" + e.Name())
		if err != nil {
			continue
		}
		var h PTYHold
		switch {
		case link == "/dev/ptmx" || link == "/dev/pts/ptmx":
			b, err := os.ReadFile(dir + "/fdinfo/" + e.Name())
			if err != nil {
				continue
			}
			n, ok := ParseFdinfoTTYIndex(b)
			if !ok {
				continue
			}
			h = PTYHold{PTS: n, Master: true}
		default:
			t := parsePTSLink(link)
			if t.PTS < 0 {
				continue
			}
			h = PTYHold{PTS: t.PTS, HungUp: t.HungUp}
		}
		if !seen[h] {
			seen[h] = true
			holds = append(holds, h)
		}
	}
	return holds, nil
}

// SampleProcess reads p's CPU time, I/O counters and terminal mtime now,
// if it is still the process the snapshot saw.
func (s *Snapshot) SampleProcess(p *Process) (Sample, error) {
	now, err := ReadStat(p.PID)
	if err != nil || now.StartTicks != p.StartTicks {
		return Sample{}, fmt.Errorf("pid %d: %w", p.PID, ErrGone)
	}
	out := Sample{At: time.Now(), CPUTicks: now.UTime + now.STime}
	if b, err := os.ReadFile(procPath(p.PID, "io")); err == nil {
		if c, err := ParseIO(b); err == nil {
			out.IO, out.IOKnown = c, true
		}
	}
	if b, err := os.ReadFile(procPath(p.PID, "status")); err == nil {
		out.VoluntarySwitches = parseStatusCounter(b, "voluntary_ctxt_switches:")
	}
	for fd := 0; fd <= 2; fd++ {
		path := procPath(p.PID, "fd/"+strconv.Itoa(fd))
		link, err := os.Readlink(path)
		if err != nil || !strings.HasPrefix(link, "/dev/pts/") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil { // follows the link to the tty inode, deleted or not
			out.TTYWritten = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
			break
		}
	}
	return out, nil
}

// parseStatusCounter reads the number after name in a /proc/PID/status
// file, 0 when absent.
func parseStatusCounter(b []byte, name string) uint64 {
	i := bytes.Index(b, []byte(name))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len(name):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(string(f[0]), 10, 64)
	return n
}

// PSS is p's proportional set size (the Pss line of
// /proc/PID/smaps_rollup, Linux 4.14+, proc(5)): its resident pages, each
// shared page divided among the processes that map it. Unlike RSS, the
// PSS of a tree's processes adds up to what their exit frees, shared
// libraries and forked copies counted once. It needs ptrace read access,
// as the environment does; the start time is checked after the read, so
// a reused pid's figure is never taken for p's.
func (s *Snapshot) PSS(p *Process) (uint64, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return 0, fmt.Errorf("pss of %d: %w", p.PID, errors.ErrUnsupported) // a fixture's, or nothing mapped
	}
	b, err := os.ReadFile(procPath(p.PID, "smaps_rollup"))
	if err != nil {
		return 0, fmt.Errorf("pss of %d: %w", p.PID, err)
	}
	if now, err := ReadStat(p.PID); err != nil || now.StartTicks != p.StartTicks {
		return 0, fmt.Errorf("pid %d: %w", p.PID, ErrGone)
	}
	return ParsePSS(b)
}

// NamespaceInit reports whether p is the init of a PID namespace below
// this one — a container's PID 1, seen from the host: the last pid of the
// NSpid line of its status is 1 (proc(5), Linux 4.1+). Such a process
// adopts the orphans of its namespace as PID 1 does the host's.
func (s *Snapshot) NamespaceInit(p *Process) bool {
	if s.Self == 0 || p.PID == 1 || p.Zombie() || p.KernelThread() {
		return false
	}
	b, err := os.ReadFile(procPath(p.PID, "status"))
	if err != nil {
		return false
	}
	return nsInit(b)
}

// nsInit reads a status file's NSpid line: more than one pid, the last 1.
func nsInit(status []byte) bool {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			return len(f) > 1 && f[len(f)-1] == "1"
		}
	}
	return false
}

// Wchan is the kernel function p sleeps in (/proc/PID/wchan), "" when it
// is not asleep or that is not shown (kernel.kptr_restrict, no
// CONFIG_KALLSYMS: "0").
func (s *Snapshot) Wchan(p *Process) string {
	if s.Self == 0 {
		return "" // a fixture's
	}
	b, err := os.ReadFile(procPath(p.PID, "wchan"))
	if err != nil || string(b) == "0" {
		return ""
	}
	return string(b)
}

// ProcessLimit is p's RLIMIT_NPROC, its soft limit (/proc/PID/limits,
// "Max processes"): 0 when unlimited or not readable.
func (s *Snapshot) ProcessLimit(p *Process) uint64 {
	if s.Self == 0 {
		return 0 // a fixture's: no live process to read
	}
	b, err := os.ReadFile(procPath(p.PID, "limits"))
	if err != nil {
		return 0
	}
	return parseProcessLimit(b)
}

// parseProcessLimit reads the soft limit of the "Max processes" line.
func parseProcessLimit(limits []byte) uint64 {
	for _, line := range strings.Split(string(limits), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max processes"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 || f[0] == "unlimited" {
				return 0
			}
			n, _ := strconv.ParseUint(f[0], 10, 64)
			return n
		}
	}
	return 0
}

// PIDsLimit is the tightest pids controller limit over p's cgroup and its
// ancestors (pids.max, pids.current: cgroup-v2(7), or the v1 pids
// hierarchy; a user's slice's is systemd's TasksMax): the limit, what is
// counted against it, and the cgroup, for the one with the least room; 0
// when none is set or none can be read. The count is of tasks, threads
// included, and a zombie counts until it is reaped.
func (s *Snapshot) PIDsLimit(p *Process) (limit, current uint64, path string) {
	if s.Self == 0 {
		return 0, 0, ""
	}
	b, err := os.ReadFile(procPath(p.PID, "cgroup"))
	if err != nil {
		return 0, 0, ""
	}
	var mnt, cg string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "pids") {
			mnt, cg = "/sys/fs/cgroup/pids", f[2] // v1
			break
		}
		if f[0] == "0" && f[1] == "" {
			for _, m := range Cgroup2Mounts {
				if c, err := os.ReadFile(m + "/cgroup.controllers"); err == nil && slices.Contains(strings.Fields(string(c)), "pids") {
					mnt, cg = m, f[2]
					break
				}
			}
		}
	}
	if mnt == "" || cg == "" || cg[0] != '/' || filepath.Clean(cg) != cg {
		return 0, 0, ""
	}
	room := ^uint64(0)
	for dir := cg; ; dir = filepath.Dir(dir) {
		l, c, ok := readPIDs(mnt + dir)
		if ok && l-min(c, l) < room {
			room, limit, current, path = l-min(c, l), l, c, dir
		}
		if dir == "/" {
			break
		}
	}
	return limit, current, path
}

// readPIDs reads a cgroup's pids.max and pids.current; ok only when a
// limit is set.
func readPIDs(dir string) (limit, current uint64, ok bool) {
	b, err := os.ReadFile(dir + "/pids.max")
	if err != nil {
		return 0, 0, false
	}
	l, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, 0, false // "max"
	}
	b, err = os.ReadFile(dir + "/pids.current")
	if err != nil {
		return 0, 0, false
	}
	c, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return l, c, err == nil
}
