package audit

import (
	"os"
	"path/filepath"
	"testing"
)

func seenRoots(r *Report) []int {
	var pids []int
	for _, f := range r.Findings {
		pids = append(pids, f.RootPID)
	}
	return pids
}

// A report-only finding is recorded when first seen and when it changes;
// what was acted on is recorded every time; what a run no longer meets
// is forgotten.
func TestSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reaper.seen")
	rep := func(fs ...Finding) *Report { return &Report{Findings: fs} }
	reported := Finding{RootPID: 10, Start: "100", Rule: "r", Action: "report", Outcome: "reported", Kind: "mcp", Reasons: []string{"reparented"}}
	killed := Finding{RootPID: 20, Start: "200", Rule: "k", Action: "terminate", Outcome: "killed"}
	refused := Finding{RootPID: 30, Start: "300", Rule: "k", Action: "terminate", Outcome: "refused"}

	run := func(r *Report) []int {
		s := LoadSeen(path)
		got := seenRoots(s.Filter(r))
		if err := s.Save(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(what string, got []int, want ...int) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: recorded %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: recorded %v, want %v", what, got, want)
			}
		}
	}
	check("first run", run(rep(reported, killed, refused)), 10, 20, 30)
	check("second run", run(rep(reported, refused)), 30)
	changed := reported
	changed.Reasons = []string{"reparented", "owner-dead"}
	check("reasons changed", run(rep(changed)), 10)
	check("unchanged again", run(rep(changed)))
	other := changed
	other.Start = "101" // the pid reused by another process
	check("same pid, other start", run(rep(other)), 10)
	check("gone, then back", run(rep()))
	check("back", run(rep(other)), 10)

	// The control: with no memory every run records every finding.
	os.Remove(path)
	check("no seen state", seenRoots(LoadSeen(path).Filter(rep(reported))), 10)
	check("not saved", seenRoots(LoadSeen(path).Filter(rep(reported))), 10)

	// Garbage, or a file that is not this user's, is an empty state.
	os.WriteFile(path, []byte("{not json"), 0o600)
	check("garbage", seenRoots(LoadSeen(path).Filter(rep(reported))), 10)
}
