package platform

import (
	"math"
	"time"

	"golang.org/x/sys/unix"
)

func recordOwnerLive(pid int, uid uint32, written time.Time) bool {
	// Most records of a dir past its bound are of pids no process has:
	// kill(2) with signal 0 says so without a read.
	if pid <= 0 || pid > math.MaxInt32 || unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	p, err := kinfoOf(pid)
	if err != nil || p.Zombie() || p.UID != uid && p.UID != 0 {
		return false
	}
	return !time.UnixMicro(int64(p.StartTicks)).After(written.Add(2 * time.Second))
}
