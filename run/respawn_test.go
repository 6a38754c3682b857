package run

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
	"github.com/orphanreaper/reaper/scan"
)

// TestRespawns: kills of one command under one live parent, each of a
// copy that started right after the last kill, make a streak; the copy
// after maxRespawns of them is refused, naming the parent. The controls:
// a copy that started long after the last kill (another session's
// leftover), and one under another parent, are planned.
func TestRespawns(t *testing.T) {
	taken := time.Unix(100000, 0)
	boot := taken.Add(-10 * time.Hour)
	// A process started at wall time at, in ticks (100 a second).
	proc := func(pid, ppid int, argv string, at time.Time) platform.Process {
		return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: strings.Fields(argv)[0],
			StartTicks: uint64(at.Sub(boot) / (10 * time.Millisecond)), UID: 1000}.WithDetails(strings.Fields(argv), nil, platform.Cgroup{})
	}
	snap := func(procs ...platform.Process) *platform.Snapshot {
		init := proc(1, 0, "init", boot)
		return platform.NewSnapshot(append([]platform.Process{init}, procs...), "boot", 10*time.Hour, taken)
	}
	item := func(s *platform.Snapshot, pid int) policy.Item {
		return policy.Item{Finding: &scan.Finding{Root: s.Get(pid)}, Rule: &policy.Rule{Name: "r"}, Action: policy.Terminate, Outcome: policy.Planned}
	}
	path := filepath.Join(t.TempDir(), "reaper.respawns")
	sup := proc(50, 1, "supervisor --loop", boot)
	other := proc(60, 1, "supervisor --other", boot)

	// Three kills, each copy started within a second of the last kill.
	at := taken.Add(-time.Minute)
	for k := range maxRespawns {
		s := snap(sup, proc(100+k, 50, "server --stdio", at.Add(500*time.Millisecond)))
		plan := &policy.Plan{Items: []policy.Item{item(s, 100+k)}}
		r := loadRespawns(path, taken)
		r.refuse(plan, s)
		if plan.Items[0].Outcome != policy.Planned {
			t.Fatalf("kill %d: refused already: %s", k+1, plan.Items[0].Detail)
		}
		at = at.Add(2 * time.Second)
		r.record(path, plan, []reap.Result{{Outcome: policy.Killed}}, s, at.Add(-time.Second), at)
	}
	tests := []struct {
		name    string
		procs   []platform.Process
		root    int
		refused bool
	}{
		{"the copy after three respawns", []platform.Process{sup, proc(200, 50, "server --stdio", at.Add(time.Second))}, 200, true},
		{"control: the same command much later", []platform.Process{sup, proc(201, 50, "server --stdio", at.Add(time.Minute))}, 201, false},
		{"control: under another parent", []platform.Process{sup, other, proc(202, 60, "server --stdio", at.Add(time.Second))}, 202, false},
		{"control: another command", []platform.Process{sup, proc(203, 50, "server --http", at.Add(time.Second))}, 203, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap(tt.procs...)
			plan := &policy.Plan{Items: []policy.Item{item(s, tt.root)}}
			loadRespawns(path, taken).refuse(plan, s)
			it := plan.Items[0]
			if got := it.Outcome == policy.Refused; got != tt.refused {
				t.Fatalf("refused %v (%s), want %v", got, it.Detail, tt.refused)
			}
			if tt.refused && !strings.Contains(it.Detail, "restart pid 50 (supervisor)") {
				t.Errorf("detail %q does not name the parent", it.Detail)
			}
		})
	}
	// Forgotten after respawnKeep.
	s := snap(sup, proc(300, 50, "server --stdio", at.Add(time.Second)))
	plan := &policy.Plan{Items: []policy.Item{item(s, 300)}}
	loadRespawns(path, at.Add(2*respawnKeep)).refuse(plan, s)
	if plan.Items[0].Outcome != policy.Planned {
		t.Errorf("a kill older than %s still counts: %s", respawnKeep, plan.Items[0].Detail)
	}
}
