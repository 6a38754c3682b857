package platform

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// readOwnUsage reads /proc/self/stat (CPU, RSS, start), statm (the
// virtual size), status (the peak), /proc/uptime (to place the start),
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
	u.RSS = p.RSS
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
	// The peak is VmHWM, this mm's own: getrusage's ru_maxrss keeps the
	// high-water mark of the forked parent's copy across execve
	// (setmax_mm_hiwater_rss in fs/exec.c), a go command's 30 MB here.
	if b, err := os.ReadFile(DefaultProcRoot + "/self/status"); err == nil {
		if _, rest, ok := bytes.Cut(b, []byte("\nVmHWM:")); ok {
			line, _, _ := bytes.Cut(rest, []byte("\n"))
			if f := bytes.Fields(line); len(f) == 2 && string(f[1]) == "kB" {
				kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
				u.PeakRSS = kb * 1024
			}
		}
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
