package audit

import (
	"slices"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Reading is what a report is read from: the pass, and what run read of
// the findings' processes beside it.
type Reading struct {
	Policy *policy.Policy
	Result *scan.Result
	Plan   *policy.Plan
	// Problems are the state that could not be read.
	Problems []string
	// Unmatched lists the trees no rule matched too (scan --all).
	Unmatched bool
	// PTYHolds are what the findings' processes hold open (their fds),
	// PTYStates the pseudo-terminals judged from them.
	PTYHolds  map[*platform.Process][]platform.PTYHold
	PTYStates []scan.PTYState
	// PSS is each member's proportional set size where it was read, by
	// pid.
	PSS map[int]uint64
	// Activity is what a run-done tree did after its run ended, by root.
	Activity map[int]*Activity
	// Waits is the kernel function a benign tree's uninterruptible
	// sleeper waits in, by root.
	Waits map[int]string
}

// Facts are what a report says of the table, read at once (Read) while
// every process it names still exists: a scan makes its report from them
// at once, a reap reads them before it acts and makes its report after
// (NewReport). Nothing edits them.
type Facts struct{ r Report }

// Read reads the facts of a report.
func Read(in Reading) *Facts {
	r := newReport(in.Policy, in.Result, in.Plan)
	r.Errors = append(r.Errors, in.Problems...)
	r.setPTYs(in.PTYHolds, in.PTYStates)
	r.setPSS(in.PSS)
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Activity = in.Activity[f.RootPID]
		if w := in.Waits[f.RootPID]; w != "" {
			f.Detail += " (it waits in " + Printable(w) + ")"
		}
	}
	if in.Unmatched {
		r.addUnmatched(in.Policy, in.Result, in.Plan)
	}
	return &Facts{*r}
}

// Done is what a reap did, for its report: the plan with each item's
// outcome, the pids each action covered (rescans included) by root, the
// signals sent, and the reap's own warnings (what it recovered, what it
// could not record).
type Done struct {
	Plan     *policy.Plan
	Covered  map[int][]int
	Signals  []Record
	Warnings []string
}

// NewReport makes a report once: from the facts, what a reap did (nil for
// a scan or a preview: the plan's outcomes as the facts hold them), and the
// policy's and the table's warnings as they are now — reads after the
// facts (a reap reading real uids as it acts) add theirs.
func NewReport(f *Facts, pol *policy.Policy, s *platform.Snapshot, done *Done) *Report {
	r := f.r
	r.Findings = slices.Clone(f.r.Findings)
	r.Warnings = append(append([]string{}, pol.Warnings...), aggregate(s.Warnings)...)
	if done != nil {
		r.setOutcomes(done.Plan, done.Covered)
		r.setEndings(done.Signals)
		r.Warnings = append(r.Warnings, done.Warnings...)
	}
	return &r
}
