//go:build linux

// The table is a Linux /proc fixture (testdata/proc), which only Linux's
// reader reads.

package run

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Collect scans the table with the set it is given, and no other: the
// fake's mark makes the fixture's mcp-remote wrapper (400) an exec. The
// control: with no client, it is the MCP server its command line says.
func TestCollectUsesTheSetGiven(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  client.Set
		want scan.Kind
	}{{"the fake's set", fakeSet, scan.KindExec}, {"control: no client", client.NewSet(), scan.KindMCP}} {
		t.Run(tt.name, func(t *testing.T) {
			tb := collected(t, config(t, tt.set))
			if len(tb.Result.Findings) == 0 || tb.Snap.Self != 0 {
				t.Fatalf("%d findings, self %d: want the fixture's", len(tb.Result.Findings), tb.Snap.Self)
			}
			if f := finding(tb, 400); f == nil || f.Kind != tt.want {
				t.Errorf("400: %+v, want kind %s", f, tt.want)
			}
		})
	}
	// A table that is not read in time ends the run, nothing signalled.
	cfg := config(t, fakeSet)
	cfg.ReadTable = func(root string) (*platform.Snapshot, error) {
		time.Sleep(2 * time.Second)
		return platform.ReadSnapshot(root)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Collect(ctx, cfg); err == nil || !strings.Contains(err.Error(), "nothing was signalled") {
		t.Errorf("a slow table: %v, want the deadline's error", err)
	}
}

// Just before acting, the ledgers are read again with a fresh table: a run
// that became owned since the plan is spared (refused, benign). The
// control: with nothing new, the plan stands.
func TestSpareNewlyOwned(t *testing.T) {
	cfg := config(t, client.NewSet()) // 400 an MCP server, which the fixture policy kills
	tb := collected(t, cfg)
	plan := func() *policy.Plan {
		return tb.Decide(cfg, policy.ModeReap)
	}
	item := func(pl *policy.Plan) *policy.Item {
		for i := range pl.Items {
			if pl.Items[i].Finding.Root.PID == 400 {
				return &pl.Items[i]
			}
		}
		t.Fatalf("no item for 400")
		return nil
	}
	control := plan()
	if err := spareNewlyOwned(context.Background(), cfg, control); err != nil {
		t.Fatal(err)
	}
	if it := item(control); it.Outcome != policy.Planned {
		t.Fatalf("control: 400 is %s (%s), want planned", it.Outcome, it.Detail)
	}
	// A ledger whose live owner (pid 1, as the table shows it) now holds
	// 400's run.
	s := tb.Snap
	l := &ledger.Ledger{Version: ledger.Version, Owner: ledger.Owner{Name: "adopter", PID: 1, Start: s.Identity(s.Get(1))},
		Runs: []ledger.Run{{ID: "adopted", Kind: ledger.KindMCP, PID: 400, Start: s.Identity(s.Get(400)), State: ledger.RunRunning}}}
	path := filepath.Join(t.TempDir(), "ledger.json")
	if err := ledger.WriteFile(path, l); err != nil {
		t.Fatal(err)
	}
	spared := plan()
	cfg.Ledgers = []string{path}
	if err := spareNewlyOwned(context.Background(), cfg, spared); err != nil {
		t.Fatal(err)
	}
	if it := item(spared); it.Outcome != policy.Refused || !it.Benign || !strings.Contains(it.Detail, "adopted") {
		t.Errorf("400 is %s, benign %v (%s); want spared: refused, benign, naming the run", it.Outcome, it.Benign, it.Detail)
	}
}

// A reap's record: the audit log and the metrics file; a report-only
// finding is logged when first seen and not again while unchanged (the
// seen file beside the lock); every signal is logged. With LogRepeats it
// is logged every run (the control).
func TestRecord(t *testing.T) {
	cfg := config(t, fakeSet)
	cfg.Policy = policy.Default(policy.Clients{Owners: fakeSet.Owners(), Marks: fakeSet.Marks()}) // it only reports
	tb := collected(t, cfg)
	pass := &Pass{Table: tb, Config: cfg, Plan: tb.Decide(cfg, policy.ModeReap)}
	for _, repeats := range []bool{false, true} {
		dir := t.TempDir()
		rc := ReapConfig{Config: cfg, Started: time.Now(), LockFile: filepath.Join(dir, "reaper.lock"), LogRepeats: repeats,
			Records: Records{AuditLog: filepath.Join(dir, "audit.jsonl"), Metrics: filepath.Join(dir, "reaper.prom"), Journal: "off"}}
		var lines []int
		reported := 0 // report-only findings: the others are logged every run
		for range 2 {
			r := &Reaped{Pass: pass, Report: pass.Report(),
				Signals: []audit.Record{{Time: time.Now(), Event: "signal", RootPID: 400, PID: 400, Signal: "SIGTERM", Result: "ok"}}}
			reported = 0
			for _, f := range r.Report.Findings {
				if f.Outcome == "reported" {
					reported++
				}
			}
			if err := r.Record(rc, nil); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, countDecisions(t, rc.Records.AuditLog))
		}
		if reported == 0 {
			t.Fatal("no report-only finding: the test would prove nothing")
		}
		if !repeats && lines[1]-lines[0] != lines[0]-reported {
			t.Errorf("decisions logged after each run: %v with %d report-only; want those once, not again while unchanged", lines, reported)
		}
		if repeats && lines[1] != 2*lines[0] {
			t.Errorf("with LogRepeats: %v; want every run's", lines)
		}
		if b, err := os.ReadFile(rc.Records.Metrics); err != nil || !strings.Contains(string(b), "reaper_") {
			t.Errorf("metrics: %v\n%s", err, b)
		}
	}
}

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

func collected(t *testing.T, cfg Config) *Table {
	t.Helper()
	tb, err := Collect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func finding(tb *Table, root int) *scan.Finding {
	for i := range tb.Result.Findings {
		if f := &tb.Result.Findings[i]; f.Root.PID == root {
			return f
		}
	}
	return nil
}

// countDecisions counts the decision records in an audit log, and checks
// each line is JSON.
func countDecisions(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if rec["event"] != "signal" {
			n++
		}
	}
	return n
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
