package run

import (
	"testing"
	"time"
)

// A user's exits trigger at most three passes in 30 s, and all users'
// together at most one every 2 s: however many processes titled like a
// client a user starts and ends, the watch passes no more often than
// that (the backstop covers the rest). Root's exits are not counted (the
// control).
func TestHintBudget(t *testing.T) {
	var b hintBudget
	t0 := time.Unix(1000, 0)
	allowed := 0
	for i := 0; i < 100; i++ { // one user's exit every 100 ms for 10 s
		if b.allow(1001, t0.Add(time.Duration(i)*100*time.Millisecond)) {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("one user, 100 exits in 10 s: %d passes, want 3", allowed)
	}
	if !b.allow(1001, t0.Add(31*time.Second)) {
		t.Error("the user's budget did not come back after 30 s")
	}
	others := 0
	for u := uint32(2000); u < 2100; u++ { // 100 users (a subordinate range), one exit each, all at once
		if b.allow(u, t0.Add(40*time.Second)) {
			others++
		}
	}
	if others != 1 {
		t.Errorf("100 users at once: %d passes, want 1 (one every 2 s for all users)", others)
	}
	for i := 0; i < 10; i++ {
		if !b.allow(0, t0.Add(40*time.Second)) {
			t.Fatal("control: root's exits were counted against a budget")
		}
	}
}
