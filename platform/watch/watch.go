package watch

import "sync/atomic"

// Target is a process to watch: its pid and its start (StartTicks), so
// that a pid reused since the scan is not watched in its place, and its
// owner's uid, which the caller's budget of hints is kept by.
type Target struct {
	PID        int
	StartTicks uint64
	UID        uint32
}

// exits is what the platforms' watchers share: the channel each exit is
// sent on, and whether one was lost to a full channel.
type exits struct {
	c    chan Target
	lost *atomic.Bool
}

func newExits() exits { return exits{c: make(chan Target, 64), lost: new(atomic.Bool)} }

// C receives each watched process that exits.
func (e exits) C() <-chan Target { return e.c }

// Lost reports whether an exit was not sent on C since the last call,
// the channel full: whose it was is not known — the caller must not take
// the exits it did read (one user's, past their budget, perhaps) for
// all there were.
func (e exits) Lost() bool { return e.lost.Swap(false) }

// exited sends t on C without waiting; when C is full, it says so
// (Lost) instead.
func (e exits) exited(t Target) {
	select {
	case e.c <- t:
	default:
		e.lost.Store(true)
	}
}
