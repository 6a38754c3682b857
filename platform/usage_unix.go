//go:build unix && !linux

package platform

import "golang.org/x/sys/unix"

// readOwnUsage reads getrusage (CPU and the peak) and RLIMIT_NOFILE:
// what the BSDs and macOS say without walking their own tables.
func readOwnUsage() (OwnUsage, error) {
	var u OwnUsage
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return u, err
	}
	u.CPUSeconds = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	u.PeakRSS = uint64(ru.Maxrss) * maxrssUnit
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		u.MaxFDs = uint64(lim.Cur)
	}
	return u, nil
}
