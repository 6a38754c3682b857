package platform

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolder finds the process holding an flock(2) on f in /proc/locks
// (proc(5): "id: FLOCK ADVISORY WRITE pid major:minor:inode start end",
// the device in hex), and its command line; 0 when none is listed.
func lockHolder(f *os.File) (int, string) {
	fi, err := f.Stat()
	if err != nil {
		return 0, ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, ""
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !sameDevIno(fields[5], want) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		argv, _ := ReadCmdline(pid)
		cmd := []rune(strings.Join(argv, " "))
		if len(cmd) > 80 {
			cmd = append(cmd[:80], '…')
		}
		return pid, string(cmd)
	}
	return 0, ""
}

// sameDevIno compares /proc/locks' "major:minor:inode" with want, the
// hex device numbers compared as numbers (the kernel pads them to two
// digits, and a major above 0xff prints wider).
func sameDevIno(got, want string) bool {
	g, w := strings.Split(got, ":"), strings.Split(want, ":")
	if len(g) != 3 || len(w) != 3 || g[2] != w[2] {
		return false
	}
	for i := 0; i < 2; i++ {
		a, err1 := strconv.ParseUint(g[i], 16, 32)
		b, err2 := strconv.ParseUint(w[i], 16, 32)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return true
}
