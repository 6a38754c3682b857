package child

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe is the running binary: /proc/self/exe names the inode this
// process runs, so a child is the same program even after a package
// upgrade deleted or replaced the file (os.Executable would start the new
// one).
func selfExe() (string, error) { return "/proc/self/exe", nil }

// childSys is a reader child's process attributes: it dies with the
// thread that forked it (Go sets PR_SET_PDEATHSIG after the credential
// change, so the change does not clear it).
func childSys() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// dataLimitRequired: Linux enforces RLIMIT_DATA on private mappings
// (since 4.7), which is the memory bound of a reader child.
const dataLimitRequired = true

// notDumpable makes the process non-dumpable (PR_SET_DUMPABLE 0): the user
// it runs as can't ptrace it or read its memory through /proc.
func notDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
