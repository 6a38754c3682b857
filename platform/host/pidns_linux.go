package host

import (
	"os"
	"syscall"
)

// initPIDNamespace is the inode of the initial PID namespace, fixed by the
// kernel (PROC_PID_INIT_INO, include/linux/proc_ns.h).
const initPIDNamespace = 0xEFFFFFFC

func hostPIDNamespace() bool {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Ino == initPIDNamespace
}
