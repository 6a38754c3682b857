package platform

import "golang.org/x/sys/unix"

func (s *Snapshot) processLimit(*Process) uint64 {
	n, err := unix.SysctlUint32("kern.maxprocperuid")
	if err != nil {
		return 0
	}
	return uint64(n)
}
