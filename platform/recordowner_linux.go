package platform

import (
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func recordOwnerLive(pid int, uid uint32, written time.Time) bool {
	// Most records of a dir past its bound are of pids no process has:
	// kill(2) with signal 0 says so without a read.
	if pid <= 0 || pid > math.MaxInt32 || unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	p, err := ReadStat(pid)
	if err != nil || p.Zombie() {
		return false // gone, or hidden from this user (hidepid): not the writer's proof
	}
	status, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return false
	}
	ruid, ok := ParseStatusUID(status)
	if !ok || ruid != uid && ruid != 0 {
		return false
	}
	b, err := os.ReadFile(DefaultProcRoot + "/uptime")
	if err != nil {
		return true // no clock to compare with: the uid alone
	}
	up, err := parseUptime(b)
	hz := clockTicks()
	if err != nil || hz == 0 {
		return true
	}
	started := time.Now().Add(-up).Add(time.Duration(p.StartTicks) * time.Second / time.Duration(hz))
	return !started.After(written.Add(2 * time.Second))
}
