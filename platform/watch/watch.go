package watch

// Target is a process to watch: its pid and its start (StartTicks), so
// that a pid reused since the scan is not watched in its place, and its
// owner's uid, which the caller's budget of hints is kept by.
type Target struct {
	PID        int
	StartTicks uint64
	UID        uint32
}
