package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/internal/runtest"
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

// Reap acts on the live table only: a fixture's is refused before the
// lock is taken.
func TestReapRefusesAFixture(t *testing.T) {
	cfg := config(t, fakeSet)
	_, err := Reap(context.Background(), ReapConfig{Config: cfg, LockFile: filepath.Join(t.TempDir(), "lock")})
	if err == nil || !strings.Contains(err.Error(), "--proc") {
		t.Errorf("Reap of a fixture: %v, want refused", err)
	}
}
