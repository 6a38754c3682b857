package child

import (
	"os"
	"syscall"
)

// selfExe is the running binary as the runtime knows its path. Unlike
// Linux's /proc/self/exe it may name a newer binary after an upgrade: the
// reader child's protocol version tells (gather's handshake).
func selfExe() (string, error) { return os.Executable() }

// childSys: there is no parent-death signal here; the child stays in the
// parent's process group, which launchd kills when the job ends
// (launchd.plist(5), AbandonProcessGroup).
func childSys() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// dataLimitRequired: macOS reports RLIMIT_DATA but is known to refuse or
// ignore it on recent releases; the CPU limit and the parent's deadline
// and output cap still bound the child.
const dataLimitRequired = false

// notDumpable: PR_SET_DUMPABLE is Linux's; a process that changed its
// credentials is not debuggable by the user on macOS anyway (P_SUGID).
func notDumpable() error { return nil }
