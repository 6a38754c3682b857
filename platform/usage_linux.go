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
	b, err := os.ReadFile(DefaultProcRoot + "/self/stat")
	if err != nil {
		return u, err
	}
	var p Process
	if err := ParseStat(b, uint64(os.Getpagesize()), &p); err != nil {
		return u, err
	}
	hz := float64(clockTicks())
	u.CPUSeconds = float64(p.UTime+p.STime) / hz
	if b, err := os.ReadFile(DefaultProcRoot + "/self/statm"); err == nil {
		if f := bytes.Fields(b); len(f) > 0 {
			pages, _ := strconv.ParseUint(string(f[0]), 10, 64)
			u.Virtual = pages * uint64(os.Getpagesize())
		}
	}
	if b, err := os.ReadFile(DefaultProcRoot + "/uptime"); err == nil {
		if up, err := parseUptime(b); err == nil {
			boot := time.Now().Add(-up)
			u.Start = boot.Add(time.Duration(float64(p.StartTicks) / hz * float64(time.Second)))
		}
	}
	// RSS and its peak are VmRSS and VmHWM, read together: the kernel
	// updates hiwater_rss lazily and reports VmHWM as the larger of it
	// and the RSS of the same read (task_mem, fs/proc/task_mmu.c), so an
	// RSS taken from stat a moment before may exceed it. getrusage's
	// ru_maxrss is no peak of this mm's: it keeps the forked parent's
	// high-water mark across execve (setmax_mm_hiwater_rss, fs/exec.c),
	// a go command's 30 MB here.
	if b, err := os.ReadFile(DefaultProcRoot + "/self/status"); err == nil {
		u.RSS, u.PeakRSS = statusKB(b, "VmRSS:"), statusKB(b, "VmHWM:")
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

// statusKB is the value of /proc/PID/status's line key ("VmRSS:"), a
// number of kB, in bytes; 0 when the line is missing or not so.
func statusKB(b []byte, key string) uint64 {
	_, rest, ok := bytes.Cut(b, []byte("\n"+key))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0
	}
	kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
	return kb * 1024
}
