package platform

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// readOwnUsage reads /proc/self/stat (CPU, start), statm (the virtual
// size), status (RSS and its peak), /proc/uptime (to place the start),
// the directory /proc/self/fd and RLIMIT_NOFILE.
func readOwnUsage() (OwnUsage, error) {
	var u OwnUsage
	b, err := os.ReadFile(DefaultProcRoot + "/self/stat") // self: right in a PID namespace whose /proc is the host's
	if err != nil {
		return u, err
	}
	var p Process
	if err := ParseStat(b, uint64(os.Getpagesize()), &p); err != nil {
		return u, err
	}
	hz := clockTicks()
	u.CPUSeconds = float64(p.UTime+p.STime) / float64(hz)
	if b, err := os.ReadFile(DefaultProcRoot + "/self/statm"); err == nil {
		if f := bytes.Fields(b); len(f) > 0 {
			pages, _ := strconv.ParseUint(string(f[0]), 10, 64)
			u.Virtual = pages * uint64(os.Getpagesize())
		}
	}
	if up, err := readUptime(); err == nil {
		u.Start = time.Now().Add(-up).Add(time.Duration(p.StartTicks) * time.Second / time.Duration(hz))
	}
	// RSS and its peak are VmRSS and VmHWM, read together: the kernel
	// updates hiwater_rss lazily and reports VmHWM as the larger of it
	// and the RSS of the same read (task_mem, fs/proc/task_mmu.c), so an
	// RSS taken from stat a moment before may exceed it. getrusage's
	// ru_maxrss is no peak of this mm's: it keeps the forked parent's
	// high-water mark across execve (setmax_mm_hiwater_rss, fs/exec.c),
	// a go command's 30 MB here.
	if b, err := os.ReadFile(DefaultProcRoot + "/self/status"); err == nil {
		u.RSS, u.PeakRSS = parseStatusCounter(b, "VmRSS:")*1024, parseStatusCounter(b, "VmHWM:")*1024 // kB
	}
	if fds, err := os.ReadDir(DefaultProcRoot + "/self/fd"); err == nil {
		u.OpenFDs = len(fds) - 1 // less ReadDir's own
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		u.MaxFDs = lim.Cur
	}
	return u, nil
}
