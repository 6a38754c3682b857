package watch

import (
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
)

// A parent over the rate for storm_for seconds in a row is said once, and
// its end once; a parent over it for less, or under it, never; another
// user's is not a user's watch's to say; storm_rate 0 says nothing.
func TestStormSecond(t *testing.T) {
	var said []string
	w := &stormWatch{streak: map[stormKey]int{}, now: map[stormKey]*audit.Storm{}, seen: "fork events",
		mine: func(uid uint32) bool { return uid == 1000 },
		about: func(pid int) (string, string, uint32, bool) {
			return "node", "node storm.js", map[int]uint32{10: 1000, 20: 1000, 30: 2000}[pid], true
		},
		say: func(s audit.Storm, over bool) {
			said = append(said, map[bool]string{false: "start ", true: "over "}[over]+s.Comm+" "+s.For.String())
		}}
	w.set(policy.Defaults{StormRate: 30, StormFor: 2 * time.Second})
	p := parentKey
	seconds := []map[stormKey]int{
		{p(10): 100, p(20): 100, p(30): 100},
		{p(10): 100, p(20): 5, p(30): 100}, // 20 drops out after one second
		{p(10): 120, p(20): 100, p(30): 100},
		{p(10): 3},
	}
	for _, c := range seconds {
		w.second(c)
	}
	want := []string{"start node 2s", "over node 3s"}
	if len(said) != len(want) || said[0] != want[0] || said[1] != want[1] {
		t.Errorf("said %q, want %q", said, want)
	}
	if _, total, _ := w.storms(); total != 1 {
		t.Errorf("%d storms counted, want 1", total)
	}
	said = nil
	w.set(policy.Defaults{StormRate: 0, StormFor: time.Second})
	w.second(map[stormKey]int{p(10): 1000})
	if len(said) != 0 {
		t.Errorf("storm_rate 0 said %q", said)
	}
}
