package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// The decision reads nothing: once a pass has loaded its findings'
// details (the one read after the table), matching rules and deciding
// leave the table's read count where it was. The control: a detail not
// loaded is read, and counted. Under the fixture's policy (rules that
// signal) and the embedded one (rules that only report, whose trees'
// uids are not read).
func TestDecideReadsNothing(t *testing.T) {
	cfg := config(t, client.NewSet())
	t.Run("fixture policy", func(t *testing.T) { decideReadsNothing(t, cfg) })
	cfg.Policy = policy.Default(policy.Clients{})
	t.Run("embedded policy", func(t *testing.T) { decideReadsNothing(t, cfg) })
}

func decideReadsNothing(t *testing.T, cfg Config) {
	tb := collected(t, cfg)
	res := tb.Result
	if len(res.Findings) == 0 {
		t.Fatal("the fixture has no findings")
	}
	// The phases as Table.Decide runs them, the reads counted around
	// policy's.
	loadRoots(tb, cfg.Policy)
	before := tb.Snap.Reads()
	m := cfg.Policy.MatchAll(res, policy.PlanOptions{Mode: policy.ModeReap, UID: tb.UID(), Doubts: tb.Doubts})
	if got := tb.Snap.Reads(); got != before {
		t.Errorf("matching rules read %d files of the table", got-before)
	}
	loadMatched(tb, cfg.Policy, m)
	res.ResolveInUse(m.Roots())
	before = tb.Snap.Reads()
	plan := cfg.Policy.Decide(res, m)
	if got := tb.Snap.Reads(); got != before {
		t.Errorf("deciding read %d files of the table", got-before)
	}
	if len(plan.Items) == 0 {
		t.Errorf("no items: the check above proved nothing")
	}
	// Control: the counter counts. A variable the table does not keep is
	// looked up in the environment read again.
	root := res.Findings[0].Root
	tb.Snap.Getenv(root, "REAPER_NOT_KEPT")
	if tb.Snap.Reads() == before {
		t.Errorf("an environment read of %d went uncounted", root.PID)
	}
}

// Every verb plans the same: scan's pass, reap's dry run and explain's
// pass give each finding the same rule and outcome but for the mode.
func TestOnePlanForEveryVerb(t *testing.T) {
	outcomes := func(cfg Config, mode policy.Mode) map[int]string {
		p, err := Scan(context.Background(), cfg, mode)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		out := map[int]string{}
		for _, it := range p.Plan.Items {
			out[it.Finding.Root.PID] = it.Rule.Name + " " + it.Detail
		}
		return out
	}
	cfg := config(t, fakeSet)
	scanned := outcomes(cfg, policy.ModeScan)
	explain := cfg
	explain.EveryStdin = true
	for name, got := range map[string]map[int]string{"dry run": outcomes(cfg, policy.ModeDryRun), "explain": outcomes(explain, policy.ModeScan)} {
		if len(got) != len(scanned) {
			t.Errorf("%s: %d items, scan %d", name, len(got), len(scanned))
		}
		for pid, want := range scanned {
			if got[pid] != want {
				t.Errorf("%s: tree %d is %q, scan says %q", name, pid, got[pid], want)
			}
		}
	}
}

// explain is a view of the pass: a finding's member, PID 1, and a pid the
// table does not hold.
func TestExplain(t *testing.T) {
	cfg := config(t, client.NewSet())
	cfg.EveryStdin = true
	p, err := Scan(context.Background(), cfg, policy.ModeScan)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := p.Explain(400)
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != "finding" || e.Finding == nil || e.Finding.Rule != "orphaned-mcp" || len(e.Rules) == 0 {
		t.Errorf("400: verdict %q, finding %+v, %d rule verdicts; want a finding of orphaned-mcp with its rules", e.Verdict, e.Finding, len(e.Rules))
	}
	if len(e.Ancestors) == 0 || e.Ancestors[len(e.Ancestors)-1].PID != 1 {
		t.Errorf("400's ancestors %+v: want them up to PID 1", e.Ancestors)
	}
	if e, err := p.Explain(1); err != nil || e.Verdict != "not-orphaned" || e.Why != "PID 1 is init" {
		t.Errorf("PID 1: %+v, %v", e, err)
	}
	var np *NoProcessError
	if _, err := p.Explain(99999); !errors.As(err, &np) || np.PID != 99999 {
		t.Errorf("a pid not there: %v, want a NoProcessError", err)
	}
}

// ledger show is a function of run: a named ledger, mapped to the table
// — its owner alive, its run orphaned with the finding's reasons — and
// the policy's own ledgers left out when paths are named.
func TestLedgers(t *testing.T) {
	cfg := config(t, client.NewSet())
	tb := collected(t, cfg)
	s := tb.Snap
	l := &ledger.Ledger{Version: ledger.Version, Owner: ledger.Owner{Name: "gw", PID: 1, Start: s.Identity(s.Get(1))},
		Runs: []ledger.Run{{ID: "r1", Kind: ledger.KindMCP, PID: 400, Start: s.Identity(s.Get(400)), State: ledger.RunDone}}}
	path := filepath.Join(t.TempDir(), "ledger.json")
	if err := ledger.WriteFile(path, l); err != nil {
		t.Fatal(err)
	}
	view, problems, err := Ledgers(context.Background(), cfg, []string{path})
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	if len(view.Ledgers) != 1 || view.Ledgers[0].OwnerStatus != "alive" || len(view.Ledgers[0].Runs) != 1 {
		t.Fatalf("view %+v: want one ledger, its owner alive, one run", view)
	}
	r := view.Ledgers[0].Runs[0]
	if r.Status != "orphaned" || !strings.Contains(strings.Join(r.Reasons, ","), "run-done") || r.Cmdline == "" {
		t.Errorf("run 400: status %q, reasons %v, cmdline %q; want orphaned, run-done, its command line", r.Status, r.Reasons, r.Cmdline)
	}
	if view.Discovered {
		t.Error("a named ledger's view says discovered")
	}
	// Control: with no path, nothing is named and the fixture discovers
	// nothing (its table is not this machine's).
	if view, _, err := Ledgers(context.Background(), cfg, nil); err != nil || len(view.Ledgers) != 0 || !view.Discovered {
		t.Errorf("no paths: %+v, %v", view, err)
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
	cfg := Config{Policy: pol, EveryStdin: true}
	tb := &Table{Snap: snap, Result: res}
	p := &Pass{Table: tb, Config: cfg, Plan: tb.Decide(cfg, policy.ModeScan)}
	e, err := p.Explain(500)
	if err != nil || e.Verdict != "out-of-scope" || !strings.Contains(e.Why, "acts on its own processes only") {
		t.Errorf("another user's orphan: %+v, %v", e, err)
	}
	if e, err := p.Explain(600); err != nil || e.Verdict == "out-of-scope" || e.Verdict == "not-orphaned" {
		t.Errorf("the user's own orphan: %+v, %v", e, err)
	}
}
