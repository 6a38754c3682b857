package watch

import "testing"

// A full channel loses an exit, and says so once (Lost): the caller must
// not take the exits it read for all there were. The control: exits the
// channel holds are not lost.
func TestExitsLost(t *testing.T) {
	e := newExits()
	for i := range cap(e.c) {
		e.exited(Target{PID: 100 + i})
	}
	if e.Lost() {
		t.Fatal("control: exits the channel holds were said lost")
	}
	e.exited(Target{PID: 7, UID: 1002})
	if !e.Lost() {
		t.Error("an exit past a full channel was not said lost")
	}
	if e.Lost() {
		t.Error("Lost said twice for one loss")
	}
}
