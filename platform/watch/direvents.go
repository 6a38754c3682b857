//go:build linux || darwin || windows

package watch

import "sync/atomic"

// dirEvents is the channel each change is sent on.
type dirEvents struct {
	c    chan Dir
	lost *atomic.Bool // a change was not sent: the channel was full
}

func newDirEvents() dirEvents { return dirEvents{c: make(chan Dir, 256), lost: new(atomic.Bool)} }

// C receives each watched dir an entry was made in or removed from, with
// the entry's name; a Dir with no Path says events were lost (the
// kernel's queue overflowed, or this channel did): every dir may have
// changed.
func (e dirEvents) C() <-chan Dir { return e.c }

// changed sends d on C without waiting. A change that finds the channel
// full is not sent, and the next that fits is sent as a loss (no Path):
// a change's name is what its reader reads, and one left out must not
// leave its record unread.
func (e dirEvents) changed(d Dir) {
	if e.lost.Load() {
		d = Dir{}
	}
	select {
	case e.c <- d:
		if d.Path == "" {
			e.lost.Store(false)
		}
	default:
		e.lost.Store(true)
	}
}
