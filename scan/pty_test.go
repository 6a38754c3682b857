package scan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

func TestPTYStates(t *testing.T) {
	procs := map[int]*platform.Process{}
	proc := func(pid int) *platform.Process {
		if procs[pid] == nil {
			procs[pid] = &platform.Process{PID: pid}
		}
		return procs[pid]
	}
	holds := map[*platform.Process][]platform.PTYHold{
		proc(10): {{PTS: 1, Master: true}, {PTS: 2, Master: true}, {PTS: 4, Master: true}},
		proc(11): {{PTS: 1}},                // alive: its master holder is not a finding
		proc(12): {{PTS: 2}},                // master held by a finding only? 10 is not
		proc(20): {{PTS: 3, Master: true}},  // a finding
		proc(21): {{PTS: 3}},                // slave of a terminal only a finding holds
		proc(30): {{PTS: 5, HungUp: true}},  // master closed
		proc(40): {{PTS: 6}},                // no master holder seen
		proc(41): {{PTS: 4, Master: false}}, // slave of 4
		proc(50): {{PTS: 7, Master: true}},  // master without slave holders: in use, not dead
	}
	inFinding := func(pid int) bool { return pid == 20 }
	states := func(scope PTYScope) map[int]string {
		got := map[int]string{}
		for _, st := range PTYStates(holds, scope, inFinding) {
			if st.Dead {
				got[st.PTS] = "dead: " + st.Why
			} else {
				got[st.PTS] = "alive: " + st.Why
			}
		}
		return got
	}
	// Every process's fds: a master that none holds is open somewhere (the
	// slave is not hung up), never proof of death.
	want := map[int]string{
		1: "alive: ", 2: "alive: ", 4: "alive: ", 7: "alive: ",
		3: "alive: only findings hold its master: it is live while they are, and ends with them",
		5: "dead: its master was closed: the holder died or let go, the slave is hung up",
		6: "alive: its master is open but no process holds it: a descriptor in flight over a unix socket",
	}
	if got := states(AllProcesses); !reflect.DeepEqual(got, want) {
		t.Errorf("every process's fds:\n%v\nwant\n%v", got, want)
	}
	// The same terminals judged from what scan reads, or from a container:
	// dead and alive agree; only where the master is differs.
	for _, scope := range []PTYScope{FindingsOnly, Incomplete} {
		got := states(scope)
		for pts, w := range want {
			if strings.HasPrefix(got[pts], "dead") != strings.HasPrefix(w, "dead") {
				t.Errorf("scope %d: pts %d %q, want as with every fd: %q", scope, pts, got[pts], w)
			}
		}
		if scope == Incomplete && !strings.HasPrefix(got[6], "alive: master not visible") {
			t.Errorf("incomplete holds: pts 6 %q, want alive and its master not visible", got[6])
		}
		if scope == FindingsOnly && !strings.Contains(got[6], "held outside the findings") {
			t.Errorf("findings' fds only: pts 6 %q, want its master held outside the findings", got[6])
		}
	}
}
