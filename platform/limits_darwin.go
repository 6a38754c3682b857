package platform

import "golang.org/x/sys/unix"

// ProcessLimit is the most processes one user may run here:
// kern.maxprocperuid (sysctl(3)), which fork(2) checks for every user but
// root. A process's own RLIMIT_NPROC, which may be lower, is not readable
// from another process on this platform.
func (s *Snapshot) ProcessLimit(*Process) uint64 {
	n, err := unix.SysctlUint32("kern.maxprocperuid")
	if err != nil {
		return 0
	}
	return uint64(n)
}
