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
	"github.com/orphanreaper/reaper/internal/runtest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
	"github.com/orphanreaper/reaper/scan"
)

// These tests run one run's steps without root and without the binary:
// the fixture machine's table (testdata/proc) and a set of clients
// holding one fake adapter.

var fakeSet = runtest.FakeSet

// config is a run of the fixture table with the fixture policy and cs.
func config(t *testing.T, cs client.Set) Config {
	return Config{Policy: runtest.Policy(t, cs), Clients: cs, ProcRoot: runtest.Fixture(), Timeout: time.Minute}
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

// Failures maps outcomes to what the exit status says: a planned action
// refused or failed counts, one the kernel refused (EPERM) counts apart,
// and what is only reported, or refused by design, does not.
func TestFailures(t *testing.T) {
	f := &scan.Finding{Root: &platform.Process{PID: 10}}
	item := func(a policy.Action, benign bool) policy.Item {
		return policy.Item{Finding: f, Rule: &policy.Rule{Name: "r"}, Action: a, Benign: benign}
	}
	for _, tt := range []struct {
		name                string
		items               []policy.Item
		results             []reap.Result
		partial, permission int
	}{
		{"all done", []policy.Item{item(policy.Terminate, false)}, []reap.Result{{Outcome: policy.Killed}}, 0, 0},
		{"failed and refused", []policy.Item{item(policy.Terminate, false), item(policy.Kill, false)},
			[]reap.Result{{Outcome: policy.Failed}, {Outcome: policy.Refused}}, 2, 0},
		{"EPERM", []policy.Item{item(policy.Terminate, false)}, []reap.Result{{Outcome: policy.Failed, Permission: true}}, 0, 1},
		{"by design", []policy.Item{item(policy.Terminate, true), item(policy.Report, false)},
			[]reap.Result{{Outcome: policy.Refused}, {Outcome: policy.Reported}}, 0, 0},
	} {
		r := &Reaped{Pass: &Pass{Plan: &policy.Plan{Items: tt.items}}, Results: tt.results}
		if p, e := r.Failures(); p != tt.partial || e != tt.permission {
			t.Errorf("%s: partial %d, permission %d; want %d, %d", tt.name, p, e, tt.partial, tt.permission)
		}
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

// Reap acts on the live table only: a fixture's is refused before the
// lock is taken.
func TestReapRefusesAFixture(t *testing.T) {
	cfg := config(t, fakeSet)
	_, err := Reap(context.Background(), ReapConfig{Config: cfg, LockFile: filepath.Join(t.TempDir(), "lock")})
	if err == nil || !strings.Contains(err.Error(), "--proc") {
		t.Errorf("Reap of a fixture: %v, want refused", err)
	}
}
