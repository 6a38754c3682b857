package watch

// Target is a process to watch: its pid and its start (StartTicks), so
// that a pid reused since the scan is not watched in its place, and its
// owner's uid, which the caller's budget of hints is kept by.
type Target struct {
	PID        int
	StartTicks uint64
	UID        uint32
}

// exits is what the platforms' watchers share: the channel each exit is
// sent on.
type exits struct{ c chan Target }

func newExits() exits { return exits{c: make(chan Target, 64)} }

// C receives each watched process that exits.
func (e exits) C() <-chan Target { return e.c }

// exited sends t on C without waiting: a full channel already holds
// hints enough for a pass.
func (e exits) exited(t Target) {
	select {
	case e.c <- t:
	default:
	}
}

// wanted is targets as a set.
func wanted(targets []Target) map[Target]bool {
	want := make(map[Target]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	return want
}
