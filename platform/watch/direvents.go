//go:build linux || darwin

package watch

// dirEvents is the channel each change is sent on.
type dirEvents struct{ c chan Dir }

func newDirEvents() dirEvents { return dirEvents{c: make(chan Dir, 64)} }

// C receives each watched dir an entry was made in or removed from; a
// Dir with no Path says events were lost (the queue overflowed): every
// dir may have changed.
func (e dirEvents) C() <-chan Dir { return e.c }

// changed sends d on C without waiting: a full channel already holds
// hints enough for a pass.
func (e dirEvents) changed(d Dir) {
	select {
	case e.c <- d:
	default:
	}
}
