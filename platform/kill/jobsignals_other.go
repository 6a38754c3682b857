//go:build !unix

package kill

import "syscall"

// No job-control signals here: the values stand for them, and every
// signal fails (unsupported.go).
const (
	SigStop syscall.Signal = -19
	SigCont syscall.Signal = -18
)

// jobSignals are the job-control signals by name.
var jobSignals = map[syscall.Signal]string{SigStop: "SIGSTOP", SigCont: "SIGCONT"}
