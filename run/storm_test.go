package run

import (
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
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

// A storm is named by its forker or its user, never by an adopter: a
// sampled second's births under PID 1 in another session are the user's,
// adopted, parent unknown; PID 1's own children (its session) are its;
// a user's many parents, none over the rate, are the user's storm, said
// once, and not beside a parent's of theirs. The control: the adopted
// births counted by parent, as before, name PID 1.
func TestStormBlamesTheForker(t *testing.T) {
	init := &platform.Process{PID: 1, SID: 1, Comm: "bash"}
	var bs []platform.Birth
	for i := range 40 {
		bs = append(bs, platform.Birth{Process: platform.Process{PID: 1000 + i, PPID: 1, SID: 500}, UID: 1001, Parent: init})
	}
	w := &stormWatch{rate: 30}
	counts := w.sampled(bs, 0)
	if counts[parentKey(1)] != 0 || counts[adoptedKey(1, 1001)] != 40 || counts[userKey(1001)] != 40 {
		t.Errorf("adopted births: %v, want 40 adopted of uid 1001's and none of pid 1's", counts)
	}
	control := map[int]int{}
	for _, b := range bs {
		control[b.PPID]++ // the old count: by the parent they have now
	}
	if control[1] < 30 {
		t.Fatal("control: counted by their parent now, PID 1 is not over the rate: the check proves nothing")
	}
	for i := range bs {
		bs[i].SID = 1 // PID 1's own session: it forked them
	}
	if counts := w.sampled(bs, 0); counts[parentKey(1)] != 40 {
		t.Errorf("PID 1's own children: %v, want 40 of pid 1's", counts)
	}

	var said []audit.Storm
	w = &stormWatch{streak: map[stormKey]int{}, now: map[stormKey]*audit.Storm{}, seen: "sampled",
		mine: func(uint32) bool { return true },
		about: func(pid int) (string, string, uint32, bool) {
			return "sh", "sh -c x", map[int]uint32{88: 1003}[pid], true
		},
		say: func(s audit.Storm, over bool) {
			if !over {
				said = append(said, s)
			}
		}}
	w.set(policy.Defaults{StormRate: 30, StormFor: time.Second})
	w.second(map[stormKey]int{adoptedKey(1, 1001): 40, userKey(1001): 40})
	if len(said) != 1 || said[0].PID != 0 || said[0].Adopter != 1 || said[0].UID != 1001 || !strings.Contains(said[0].Line(), "parent unknown") {
		t.Errorf("adopted: said %+v, want one storm of uid 1001's adopted by pid 1, parent unknown", said)
	}
	said = nil
	w.second(map[stormKey]int{userKey(1002): 50, parentKey(77): 5})
	if len(said) != 1 || said[0].UID != 1002 || said[0].PID != 0 || !strings.Contains(said[0].Line(), "many parents") {
		t.Errorf("many parents: said %+v, want the user's storm", said)
	}
	said = nil
	w.second(map[stormKey]int{userKey(1003): 60, parentKey(88): 60})
	if len(said) != 1 || said[0].PID != 88 {
		t.Errorf("one parent over the rate: said %+v, want the parent's storm alone", said)
	}
}
