package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/policy"
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
