package scan

import (
	"fmt"
	"slices"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// RunStatus is what a ledger run maps to in the process table now.
type RunStatus string

// The statuses of the report's "ledger" entries.
const (
	// StatusAlive: the process lives with the run's identity and is not a
	// finding (a live owner's running run).
	StatusAlive RunStatus = "alive"
	// StatusGone: no such process (or only its zombie).
	StatusGone RunStatus = "gone"
	// StatusPIDReused: the pid belongs to another process now.
	StatusPIDReused RunStatus = "pid-reused"
	// StatusOrphaned: the process lives with the run's identity and is part
	// of a finding.
	StatusOrphaned RunStatus = "orphaned"
	// StatusUnverified: the run records no identity, so nothing it says
	// about the process at its pid counts.
	StatusUnverified RunStatus = "unverified"
	// StatusForeign: the process at the run's pid is another user's than
	// the ledger's speaker, so nothing the ledger says about it counts.
	StatusForeign RunStatus = "foreign"
)

// LedgerRun is one run of one ledger, checked against the snapshot.
type LedgerRun struct {
	Ledger *ledger.Ledger
	Run    *ledger.Run
	Status RunStatus
	// Info is "ledger-stale" for a running run whose process is gone, and
	// "pid-reused" for a pid that is another process now: information only,
	// never a reason to signal.
	Info string
	// Detail says what the check found, in words.
	Detail string
}

// ApplyLedgers checks every run the ledgers name against the snapshot and
// folds what they prove into the findings:
//   - a live owner's running run is owned: it is never a finding, even when
//     reparented, and a tree holding it is refused;
//   - a run whose owner is gone (pid gone, or alive with another start
//     identity) adds owner-dead; a run marked done adds run-done; a run
//     whose session or an ancestor session was reset or closed adds
//     session-ended — to the finding whose tree holds the run, or else to a
//     new finding rooted at the run's process, even under a live owner.
//
// A pid counts only if the live process has the run's start identity (or,
// for sources without one, the run's unique argv token).
func (r *Result) ApplyLedgers(ls []*ledger.Ledger) {
	proven := r.verifyRuns(ls)
	r.dropOwned()
	r.setApart()
	r.foldProven(proven)
}

// provenRun is a run whose live process the ledger proves left behind.
type provenRun struct {
	lr      int // index in r.Ledger
	i       int // process index
	reasons []Reason
	why     []string
}

// verifyRuns checks every run against the snapshot and records it in
// r.Ledger. A live owner's running run marks its process owned; a run
// whose owner is gone, that is marked done, or whose session ended is
// returned with the reasons and the evidence.
func (r *Result) verifyRuns(ls []*ledger.Ledger) []provenRun {
	s := r.Tree.Snap
	var found []provenRun
	for _, l := range ls {
		ownerDead, ownerWhy := r.OwnerGone(l)
		for k := range l.Runs {
			run := &l.Runs[k]
			lr := LedgerRun{Ledger: l, Run: run}
			i, status, detail := r.verify(run)
			if status == StatusAlive && !r.speaks(l.Speaker, &s.Procs[i], fmt.Sprintf("run %s of %s", run.ID, l.Source)) {
				status = StatusForeign
				detail = fmt.Sprintf("pid %d is uid %s's: this ledger is uid %d's, and speaks only for that user's processes", run.PID, uidText(s.UID(&s.Procs[i])), l.Speaker)
			}
			lr.Status, lr.Detail = status, detail
			switch status {
			case StatusGone:
				if run.State == ledger.RunRunning && run.Note == "" {
					lr.Info = "ledger-stale"
				}
			case StatusPIDReused:
				lr.Info = "pid-reused"
			}
			r.Ledger = append(r.Ledger, lr)
			if status != StatusAlive {
				continue
			}
			p := provenRun{lr: len(r.Ledger) - 1, i: i}
			if ownerDead {
				p.reasons = append(p.reasons, OwnerDead)
				p.why = append(p.why, fmt.Sprintf("run %s of %s: %s", run.ID, l.Owner.Name, ownerWhy))
			}
			if run.State == ledger.RunDone {
				p.reasons = append(p.reasons, RunDone)
				p.why = append(p.why, fmt.Sprintf("run %s is marked done in %s, its process lives", run.ID, l.Source))
			}
			if run.Superseded != "" {
				p.reasons = append(p.reasons, Superseded)
				p.why = append(p.why, fmt.Sprintf("run %s: %s", run.ID, run.Superseded))
			}
			if sess := l.EndedSession(run.Session); sess != nil {
				p.reasons = append(p.reasons, SessionEnded)
				p.why = append(p.why, fmt.Sprintf("run %s: session %s was %s", run.ID, sess.Key, sess.State))
			}
			if len(p.reasons) > 0 && run.Proof != "" {
				p.why = append(p.why, fmt.Sprintf("run %s: %s", run.ID, run.Proof))
			}
			if len(p.reasons) == 0 {
				if ownerUnknown(l) {
					// Nobody can check an owner without a pid (a client's
					// state with no lock naming it): it proves nothing either
					// way, and the process-table reasons apply.
					r.Ledger[p.lr].Detail = "its owner is unknown (no pid, no lock): neither owned nor owner-dead"
					continue
				}
				r.owned[s.Procs[i].PID] = fmt.Sprintf("run %s of live owner %s (pid %d)", run.ID, l.Owner.Name, l.Owner.PID)
				continue
			}
			found = append(found, p)
		}
	}
	return found
}

// dropOwned removes the findings rooted at an owned run's process: a live
// owner's running run is never a finding, even when reparented.
func (r *Result) dropOwned() {
	r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool {
		_, owned := r.owned[f.Root.PID]
		return owned
	})
}

// setApart takes out of each finding the owned runs below its root that
// lead a session of their own without a terminal, with what they hold
// (Finding.Apart). Such a process was made to outlive its parent — a
// daemon, setsid, as a client's managed daemon is (its stdio /dev/null
// and a log file) — and the record that owns it verifies its pid and
// start: the tree that started it may be reaped without it. Any other
// owned run stays a member, and the gate refuses the tree that holds it:
// one that shares its parent's session, or leads one on a terminal (a PTY
// shell, whose master a member may hold), may die with what would be
// signalled.
func (r *Result) setApart() {
	for k := range r.Findings {
		f := &r.Findings[k]
		for j := 1; j < len(f.Members); j++ {
			p := f.Members[j].Proc
			why, owned := r.owned[p.PID]
			if !owned || !p.SessionLeader() || p.TTY != 0 {
				continue
			}
			n := len(f.Members)
			f.detach(p.PID)
			f.Apart = append(f.Apart, p)
			what := "it is not this tree's, and is left alone"
			switch below := n - len(f.Members) - 1; {
			case below == 1:
				what = "it and the process below it are not this tree's, and are left alone"
			case below > 1:
				what = fmt.Sprintf("it and the %d processes below it are not this tree's, and are left alone", below)
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("pid %d, %s, leads a session of its own: %s", p.PID, why, what))
			j-- // the next member is where p was
		}
	}
}

// foldProven adds each proven run's reasons and evidence to the finding
// rooted at its process — a new finding when the run's process was not a
// finding's root, taken out of any larger tree it was part of (which is
// judged on its own evidence) — and attributes the finding to the run.
func (r *Result) foldProven(found []provenRun) {
	defer func() { slices.SortFunc(r.Findings, func(a, b Finding) int { return a.Root.PID - b.Root.PID }) }()
	if len(found) == 0 {
		return
	}
	s := r.Tree.Snap
	// Which finding each process roots, and which holds it, to fold runs
	// into the right tree: by index in the table, k+1 (0: none). Findings
	// nest where a subreaper inside one tree adopted orphans of its own: a
	// process rooting a finding is folded there, whatever larger tree also
	// holds it. (A map by pid cost 1.1 MiB at 20,000 members; these 160 KiB.)
	rooted, holder := make([]int32, len(s.Procs)), make([]int32, len(s.Procs))
	hold := func(k int) {
		f := &r.Findings[k]
		rooted[s.Index(f.Root.PID)] = int32(k + 1)
		for _, m := range f.Members {
			holder[s.Index(m.Proc.PID)] = int32(k + 1)
		}
	}
	for k := range r.Findings {
		hold(k)
	}
	for _, p := range found {
		lr := &r.Ledger[p.lr]
		proc := &s.Procs[p.i]
		k := int(rooted[p.i]) - 1
		if k < 0 {
			if r.ownerOf(p.i) >= 0 {
				lr.Status, lr.Detail = StatusAlive, "the run's pid is a live owner: not a finding"
				continue
			}
			if held := int(holder[p.i]) - 1; held >= 0 {
				r.Findings[held].detach(proc.PID)
			}
			r.Findings = append(r.Findings, Finding{Root: proc, Kind: r.cfg.Classify(s, proc)})
			k = len(r.Findings) - 1
			r.members(&r.Findings[k], p.i)
			hold(k)
		}
		f := &r.Findings[k]
		f.spoken(lr.Ledger.Speaker)
		for _, reason := range p.reasons {
			if !f.Has(reason) {
				f.Reasons = append(f.Reasons, reason)
			}
		}
		f.Evidence = append(f.Evidence, p.why...)
		f.claimed()
		if f.RunID == "" {
			f.RunID, f.Run = lr.Run.ID, lr.Run
			if lr.Run.Kind != "" {
				f.Kind = lr.Run.Kind
			}
		}
		if f.Owner == "" {
			f.Owner, f.OwnerPID = lr.Ledger.Owner.Name, lr.Ledger.Owner.PID
		}
		lr.Status = StatusOrphaned
	}
}

// ownerUnknown reports whether nothing names the ledger's owner process:
// no pid, and no proof from the source that it is gone.
func ownerUnknown(l *ledger.Ledger) bool { return l.Owner.PID <= 0 && l.Owner.Gone == "" }

// OwnerGone reports whether the ledger's owner is provably gone, and why
// (the package's OwnerGone, which every source of proof shares). An owner
// the source could not name (pid 0) proves nothing: fail closed.
func (r *Result) OwnerGone(l *ledger.Ledger) (bool, string) {
	if l.Owner.Gone != "" {
		return true, l.Owner.Gone
	}
	if l.Owner.PID <= 0 {
		return false, "the source names no owner pid"
	}
	gone, why := OwnerGone(r.Tree.Snap, RecordedBy(l.Speaker, l.Owner.PID, l.Owner.Start))
	return gone, "owner " + why
}

// verify finds the run's process and checks its identity.
func (r *Result) verify(run *ledger.Run) (int, RunStatus, string) {
	s := r.Tree.Snap
	if run.PID <= 0 {
		if run.Note != "" {
			return -1, StatusGone, run.Note
		}
		return -1, StatusGone, "the run has no pid"
	}
	i := s.Index(run.PID)
	if i < 0 || s.Procs[i].Zombie() {
		return -1, StatusGone, fmt.Sprintf("pid %d is gone", run.PID)
	}
	p := &s.Procs[i]
	if !run.Verifiable() {
		return -1, StatusUnverified, "the run records no start identity"
	}
	switch {
	case run.Start != "" && !validIdentity(run.Start):
		return -1, StatusUnverified, fmt.Sprintf("start %q is not a start identity (<boot_id>:<starttime> or <seconds>.<microseconds>)", run.Start)
	case run.Start != "":
		if got := s.Identity(p); got != run.Start {
			return -1, StatusPIDReused, fmt.Sprintf("pid %d started %s, the run says %s", run.PID, got, run.Start)
		}
	case run.ArgvProof[1] != "":
		argv := s.Cmdline(p)
		ok := false
		for k := 0; k+1 < len(argv); k++ {
			ok = ok || argv[k] == run.ArgvProof[0] && argv[k+1] == run.ArgvProof[1]
		}
		if !ok {
			return -1, StatusPIDReused, fmt.Sprintf("pid %d does not carry %s %s", run.PID, run.ArgvProof[0], run.ArgvProof[1])
		}
	}
	return i, StatusAlive, ""
}

// detach removes the subtree rooted at pid from f's members: in pre-order
// it is pid and the members after it that are deeper.
func (f *Finding) detach(pid int) {
	for i, m := range f.Members {
		if m.Proc.PID != pid {
			continue
		}
		end := i + 1
		for end < len(f.Members) && f.Members[end].Depth > m.Depth {
			end++
		}
		for _, d := range f.Members[i:end] {
			f.RSS -= d.Proc.RSS
		}
		f.Members = slices.Delete(f.Members, i, end)
		return
	}
}

// OwnedRun says whose run the process pid is, if a live owner's ledger
// holds it as running.
func (r *Result) OwnedRun(pid int) (string, bool) {
	why, ok := r.owned[pid]
	return why, ok
}

// LiveOwners returns the live owner processes the scan came across: every
// candidate root, its ancestors and the pids markers named were checked.
func (r *Result) LiveOwners() []*platform.Process {
	var out []*platform.Process
	for i, o := range r.owner {
		if o >= 2 {
			out = append(out, &r.Tree.Snap.Procs[i])
		}
	}
	return out
}

// validIdentity reports whether s has the form of a start identity, Linux's
// or macOS's. A malformed one proves nothing: unverified, not pid-reused.
func validIdentity(s string) bool {
	if _, _, err := platform.ParseIdentity(s); err == nil {
		return true
	}
	_, err := platform.ParseDarwinIdentity(s)
	return err == nil
}
