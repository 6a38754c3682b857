//go:build unix

package kill

import "syscall"

// The job-control verbs: a reap stops a tree with Stop and lets it go on
// with Continue.
const (
	Stop     Signal = syscall.SIGSTOP
	Continue Signal = syscall.SIGCONT
)
