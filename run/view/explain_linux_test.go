//go:build linux

// The table is a Linux /proc fixture (testdata/proc), which only Linux's
// reader reads.

package view

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/internal/runtest"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

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

// config is a run of the fixture table with the fixture policy and cs.
func config(t *testing.T, cs client.Set) run.Config {
	return run.Config{Policy: runtest.Policy(t, cs), Clients: cs, ProcRoot: runtest.Fixture(), Timeout: time.Minute}
}
