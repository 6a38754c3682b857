package kill

import "syscall"

// Signal is one of the verbs a reap sends through a Handle. Callers name
// the verbs here, not in syscall, so that only platform knows what the
// system calls them.
type Signal = syscall.Signal

// The verbs that end a process: Interrupt (what a terminal's Ctrl-C
// sends, for a tree that handles it), Term (the polite request) and Kill
// (the one no process can catch). Stop and Continue are job control's.
const (
	Interrupt Signal = syscall.SIGINT
	Term      Signal = syscall.SIGTERM
	Kill      Signal = syscall.SIGKILL
)

// jobNames are the job-control verbs by signal(7)'s names (Stop and
// Continue stand for nothing where there is no job control, so
// platform/signals cannot name them); signals.Name names the rest.
var jobNames = map[Signal]string{Stop: "SIGSTOP", Continue: "SIGCONT"}
