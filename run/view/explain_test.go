package view

import (
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// explain by a user of another user's orphan says it is out of that
// reaper's scope, not that it is no orphan. The control: the same
// question of the user's own orphan is answered as a tree of its own.
func TestExplainOutOfScope(t *testing.T) {
	proc := func(pid, ppid int, uid uint32, argv ...string) platform.Process {
		return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: "x", StartTicks: uint64(pid), RSS: 4096, UID: uid}.
			WithDetails(argv, nil, platform.Cgroup{Unified: "/"})
	}
	snap := platform.NewSnapshot([]platform.Process{
		proc(1, 0, 0, "/sbin/init"),
		proc(500, 1, 1001, "node", "server.js"), // another user's orphan
		proc(600, 1, 1000, "node", "mine.js"),   // the reaper's user's
	}, "boot", 1000*time.Second, time.Unix(0, 0))
	snap.FixtureUID = 1000 // read by uid 1000's reaper
	pol := policy.Default(policy.Clients{})
	res := scan.Table(snap, pol.ScanConfig())
	res.Attribute(scan.Evidence{})
	cfg := run.Config{Policy: pol, EveryStdin: true}
	tb := &run.Table{Snap: snap, Result: res}
	p := &run.Pass{Table: tb, Config: cfg, Plan: tb.Decide(cfg, policy.ModeScan)}
	e, err := Explain(p, 500)
	if err != nil || e.Verdict != "out-of-scope" || !strings.Contains(e.Why, "acts on its own processes only") {
		t.Errorf("another user's orphan: %+v, %v", e, err)
	}
	if e, err := Explain(p, 600); err != nil || e.Verdict == "out-of-scope" || e.Verdict == "not-orphaned" {
		t.Errorf("the user's own orphan: %+v, %v", e, err)
	}
}
