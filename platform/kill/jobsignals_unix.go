//go:build unix

package kill

import "syscall"

// The job-control signals a reap stops a tree with and lets it go on
// with: callers name them here, not in syscall, so that only platform
// knows what the system calls them.
const (
	SigStop = syscall.SIGSTOP
	SigCont = syscall.SIGCONT
)

// jobSignals are the job-control signals by name.
var jobSignals = map[syscall.Signal]string{SigStop: "SIGSTOP", SigCont: "SIGCONT"}
