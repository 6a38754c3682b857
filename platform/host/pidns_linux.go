package host

import (
	"os"
	"syscall"
)

// initPIDNamespace is the inode of the initial PID namespace, fixed by the
// kernel (PROC_PID_INIT_INO, include/linux/proc_ns.h).
const initPIDNamespace = 0xEFFFFFFC

// HostPIDNamespace reports whether this process sees the host's process
// table: its PID namespace is the initial one. Inside another (a
// container, `unshare --pid`), processes outside it are not in /proc — the
// holder of the terminal one types in, for one — so "no process holds it"
// proves nothing. Unknown (an unreadable /proc/self/ns/pid) is false.
func HostPIDNamespace() bool {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Ino == initPIDNamespace
}
