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

// names are the verbs by the names signal(7) gives them.
var names = map[Signal]string{Interrupt: "SIGINT", Term: "SIGTERM", Kill: "SIGKILL", Stop: "SIGSTOP", Continue: "SIGCONT"}
