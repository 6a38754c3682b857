//go:build linux || windows

package reap

// What the Linux and Windows tests share: the live tree of a pid, a plan
// for it, and a recorder of what the reap sent.

import (
	"sync"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// waitMembers polls until the tree rooted at pid has at least n processes.
func waitMembers(t *testing.T, pid, n int) {
	t.Helper()
	// A ceiling, not a wait, scaled by the processes asked for: a tree
	// forking every millisecond reached 33 of 50 in 5 s beside the real
	// clients' suites on 2 cores.
	deadline := time.Now().Add(5*time.Second + time.Duration(n)*200*time.Millisecond)
	for len(treeOf(t, pid)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("tree of %d has %d processes, want %d", pid, len(treeOf(t, pid)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// treeOf lists the live (non-zombie) processes of the tree rooted at pid.
func treeOf(t *testing.T, pid int) []int {
	t.Helper()
	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr := scan.NewTree(s)
	i := s.Index(pid)
	if i < 0 {
		return nil
	}
	var out []int
	tr.Walk(i, func(k, _ int) {
		if !s.Procs[k].Zombie() {
			out = append(out, s.Procs[k].PID)
		}
	})
	return out
}

// planFor makes a one-item plan to act on the tree rooted at pid, as the
// policy would.
func planFor(t *testing.T, pid int, action policy.Action) (*policy.Plan, *platform.Snapshot) {
	t.Helper()
	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	tr := scan.NewTree(s)
	i := s.Index(pid)
	if i < 0 {
		t.Fatalf("pid %d not in the table", pid)
	}
	f := &scan.Finding{Root: &s.Procs[i]}
	tr.Walk(i, func(k, depth int) {
		if !s.Procs[k].Zombie() {
			f.Members = append(f.Members, scan.Member{Proc: &s.Procs[k], Depth: depth})
		}
	})
	return &policy.Plan{Mode: policy.ModeReap, Items: []policy.Item{{Finding: f, Rule: &policy.Rule{Name: "test"},
		Action: action, Outcome: policy.Planned}}}, s
}

type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(e Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) signals(sig string) int {
	n := 0
	for _, e := range r.events {
		if e.Signal == sig && e.Result == "ok" {
			n++
		}
	}
	return n
}

func options(rec *recorder) Options {
	return Options{Grace: time.Second, ProcRoot: platform.DefaultProcRoot, Guard: kill.NewGuard(nil), OnSignal: rec.add,
		Deadline: time.Now().Add(30 * time.Second), Admit: admitAll}
}

// admitAll admits every process: these tests' plans name trees they
// started, by pid.
func admitAll(*platform.Snapshot, *platform.Process, *policy.Item) string { return "" }
