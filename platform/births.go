package platform

import "time"

// Birth is a process Births found started since its last look: its
// table entry (parent, session, comm, start) and its real uid (NoUID
// where that could not be read).
type Birth struct {
	Process
	UID uint32
	// Parent is its parent's entry, read with it (nil: gone already).
	Parent *Process
}

// Births finds the processes started since its last look, by listing the
// process table against the last listing: only thread-group leaders are
// listed (a thread is no process: proc(5)), so a user's short threads
// cost a listing and no more, and are never counted as forks. Each new
// pid's stat is read, at most max a look; those younger than young are
// returned. For a watch's sampled fork count, where the kernel's fork
// events cannot be had.
type Births struct {
	//lint:ignore U1000 read on Linux alone, where the table is listed
	known map[int32]bool // the pids of the last listing
}

// NewBirths lists the table once, so that the first look counts only
// what started after it.
func NewBirths() (*Births, error) { return newBirths() }

// Look returns the processes started since the last look and younger
// than young (at most max of them read), and how many new pids were left
// unread past max.
func (b *Births) Look(young time.Duration, most int) ([]Birth, int, error) {
	return b.look(young, most)
}
