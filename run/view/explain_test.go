package view

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/internal/runtest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// config is a run of the fixture table with the fixture policy and cs.
func config(t *testing.T, cs client.Set) run.Config {
	return run.Config{Policy: runtest.Policy(t, cs), Clients: cs, ProcRoot: runtest.Fixture(), Timeout: time.Minute}
}

// explain is a view of the pass: a finding's member, PID 1, and a pid the
// table does not hold.
func TestExplain(t *testing.T) {
	cfg := config(t, client.NewSet())
	cfg.EveryStdin = true
	p, err := run.Scan(context.Background(), cfg, policy.ModeScan)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := Explain(p, 400)
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != "finding" || e.Finding == nil || e.Finding.Rule != "orphaned-mcp" || len(e.Rules) == 0 {
		t.Errorf("400: verdict %q, finding %+v, %d rule verdicts; want a finding of orphaned-mcp with its rules", e.Verdict, e.Finding, len(e.Rules))
	}
	if len(e.Ancestors) == 0 || e.Ancestors[len(e.Ancestors)-1].PID != 1 {
		t.Errorf("400's ancestors %+v: want them up to PID 1", e.Ancestors)
	}
	if e, err := Explain(p, 1); err != nil || e.Verdict != "not-orphaned" || e.Why != "PID 1 is init" {
		t.Errorf("PID 1: %+v, %v", e, err)
	}
	var np *NoProcessError
	if _, err := Explain(p, 99999); !errors.As(err, &np) || np.PID != 99999 {
		t.Errorf("a pid not there: %v, want a NoProcessError", err)
	}
}

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
