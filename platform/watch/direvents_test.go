//go:build linux || darwin || windows

package watch

import "testing"

// TestDirEventsLoss: a change that finds the channel full is not dropped
// unsaid: the next change that fits is sent as a loss (no Path), which
// makes every dir due a read — its name would otherwise go unread.
// Control: while there is room, each change is sent as it is.
func TestDirEventsLoss(t *testing.T) {
	e := newDirEvents()
	full := cap(e.c)
	for k := 0; k < full; k++ {
		e.changed(Dir{Path: "/s", Name: "a"})
	}
	e.changed(Dir{Path: "/s", Name: "lost"}) // no room
	for k := 0; k < full; k++ {
		if got := <-e.C(); got.Name != "a" {
			t.Fatalf("change %d: %+v, want the name sent (control)", k, got)
		}
	}
	e.changed(Dir{Path: "/s", Name: "next"})
	if got := <-e.C(); got.Path != "" {
		t.Errorf("after a change was lost: %+v, want a loss (no Path)", got)
	}
	e.changed(Dir{Path: "/s", Name: "after"})
	if got := <-e.C(); got.Name != "after" {
		t.Errorf("after the loss was said: %+v, want the change itself", got)
	}
}
