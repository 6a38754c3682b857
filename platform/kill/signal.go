package kill

import (
	"fmt"
	"os"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/signals"
)

// Errors of the signal path. Callers match them with errors.Is; they are
// platform's, which the table's reads return too.
var (
	ErrGone       = platform.ErrGone
	ErrIdentity   = platform.ErrIdentity
	ErrRefused    = platform.ErrRefused
	ErrPermission = platform.ErrPermission
)

// Target is a process as the scan saw it: what a signal must still find.
type Target struct {
	PID        int
	StartTicks uint64
}

// Guard is what the one signal seam refuses besides what it checks itself
// (pid ≤ 1, kernel threads, zombies, the reaper and its ancestors): the
// caller's deny list, such as live owners and protected processes, by pid
// with the reason.
type Guard struct {
	Deny map[int]string
	// self holds the reaper's pid and its ancestors', taken when the guard
	// was made.
	self map[int]bool
}

// RefusalError says why the seam refused a process.
type RefusalError struct {
	PID    int
	Reason string
}

func (e *RefusalError) Error() string { return fmt.Sprintf("pid %d: %s", e.PID, e.Reason) }
func (e *RefusalError) Unwrap() error { return ErrRefused }

// NewGuard makes the seam's guard: the reaper's own pid and its ancestors
// (read now from the process table), plus deny.
func NewGuard(deny map[int]string) *Guard {
	g := &Guard{Deny: deny, self: map[int]bool{}}
	for pid, steps := os.Getpid(), 0; pid > 0 && steps < 4096; steps++ {
		g.self[pid] = true
		ppid, err := parentPID(pid)
		if err != nil {
			break
		}
		pid = ppid
	}
	return g
}

// check applies the seam's own refusals and the deny list to pid.
func (g *Guard) check(pid int) error {
	switch {
	case pid <= 1:
		return &RefusalError{pid, "pid 1 and below are never signalled"}
	case g.self[pid]:
		return &RefusalError{pid, "the reaper itself or one of its ancestors"}
	}
	if why, ok := g.Deny[pid]; ok {
		return &RefusalError{pid, why}
	}
	return nil
}

// signalName names the signals the reaper sends, for logs.
func signalName(sig Signal) string {
	if name, ok := jobNames[sig]; ok {
		return name
	}
	if sig == 0 {
		return "0"
	}
	return signals.Name(sig)
}

// SignalName is the name of sig as the audit log writes it.
func SignalName(sig Signal) string { return signalName(sig) }
