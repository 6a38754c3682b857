package scan

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

// TestOwnerGone: the one liveness decision, in its order — pid, start,
// user — for a record with a start, one without (a lock), a mark, and
// root's record. Each reuse of the pid by another user's process proves
// the owner gone; the same user's or root's process that started in time
// is the owner (the controls).
func TestOwnerGone(t *testing.T) {
	const alice, bob = 1001, 1002
	carrier := as(alice, p(700, 1, "node", []string{"node", "server.js"}, nil, "/")) // started at tick 70000
	tests := []struct {
		name string
		at   []platform.Process // what holds pid 500 now
		o    Named
		gone bool
		why  string
	}{
		{"no process at the pid", nil, Named{PID: 500, User: alice}, true, "pid 500 is gone"},
		{"a zombie at the pid", []platform.Process{{PID: 500, PPID: 1, State: 'Z', UID: alice}}, Named{PID: 500, User: alice}, true, "has exited"},
		{"the recorded start", []platform.Process{as(alice, p(500, 1, "claude", []string{"claude"}, nil, "/"))}, Named{PID: 500, Start: id(500), User: alice}, false, "alive"},
		{"a later start than recorded", []platform.Process{as(alice, p(500, 1, "sleep", []string{"sleep"}, nil, "/"))}, Named{PID: 500, Start: id(499), User: alice}, true, "another process now"},
		{"another user's process with another start: the start decides first", []platform.Process{as(bob, p(500, 1, "sleep", []string{"sleep"}, nil, "/"))}, Named{PID: 500, Start: id(499), User: alice}, true, "the record says"},
		{"another user's process at the recorded start", []platform.Process{as(bob, p(500, 1, "claude", []string{"claude"}, nil, "/"))}, Named{PID: 500, Start: id(500), User: alice}, true, "uid 1002's"},
		{"no start recorded, the same user's process", []platform.Process{as(alice, p(500, 1, "copilot", []string{"copilot"}, nil, "/"))}, Named{PID: 500, User: alice}, false, "alive"},
		{"no start recorded, another user's process", []platform.Process{as(bob, p(500, 1, "sleep", []string{"sleep"}, nil, "/"))}, Named{PID: 500, User: alice}, true, "uid 1002's"},
		{"no start recorded, root's process", []platform.Process{as(0, p(500, 1, "copilot", []string{"copilot"}, nil, "/"))}, Named{PID: 500, User: alice}, false, "alive"},
		{"root's record: any user's process", []platform.Process{as(bob, p(500, 1, "gateway", []string{"gateway"}, nil, "/"))}, Named{PID: 500, User: 0, AnyUser: true}, false, "alive"},
		{"a mark, its owner started first", []platform.Process{as(alice, p(500, 1, "claude", []string{"claude"}, nil, "/"))}, Named{PID: 500, NotAfter: &carrier, User: alice}, false, "alive"},
		{"a mark, a process started after the carrier", []platform.Process{as(alice, p(800, 1, "sleep", []string{"sleep"}, nil, "/"))}, Named{PID: 800, NotAfter: &carrier, User: alice}, true, "started after pid 700"},
		{"a mark, another user's process started first", []platform.Process{as(bob, p(500, 1, "sleep", []string{"sleep"}, nil, "/"))}, Named{PID: 500, NotAfter: &carrier, User: alice}, true, "uid 1002's"},
		{"a mark, root's process started first", []platform.Process{as(0, p(500, 1, "claude", []string{"claude"}, nil, "/"))}, Named{PID: 500, NotAfter: &carrier, User: alice}, false, "alive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot(append(tt.at, carrier)...)
			gone, why := OwnerGone(s, tt.o)
			if gone != tt.gone || !strings.Contains(why, tt.why) {
				t.Errorf("OwnerGone = %v, %q; want %v, containing %q", gone, why, tt.gone, tt.why)
			}
		})
	}
}
