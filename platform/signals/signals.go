package signals

import (
	"os"
	"syscall"
)

// The signals reaper catches.
var (
	// Interrupt is a terminal's Ctrl-C.
	Interrupt os.Signal = syscall.SIGINT
	// Hangup asks a watch to read its policy again.
	Hangup os.Signal = syscall.SIGHUP
	// Ending are the signals that end a verb early: Ctrl-C and the
	// service manager's stop.
	Ending = []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	// Wrapping are the signals reaper run catches while it waits for
	// the command it wraps: the terminal's (Ctrl-C, Ctrl-\, a hangup)
	// and the service manager's stop.
	Wrapping = []os.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM}
)

// ExitStatus is the shell's exit status for a process ended by sig:
// 128 plus its number, 1 for what is not a signal of this system.
func ExitStatus(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok && n > 0 {
		return 128 + int(n)
	}
	return 1
}

// Name is sig as signal(7) names it ("SIGHUP"), its description where it
// has no name here.
func Name(sig os.Signal) string {
	if n, ok := sig.(syscall.Signal); ok {
		if name, ok := names[n]; ok {
			return name
		}
	}
	return sig.String()
}

var names = map[syscall.Signal]string{
	syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL",
}
