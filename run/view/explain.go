package view

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// NoProcessError is a pid explain was asked about that the table does
// not hold.
type NoProcessError struct{ PID int }

func (e *NoProcessError) Error() string {
	return fmt.Sprintf("no process %d in the process table", e.PID)
}

// Explain tells the story of one process of the pass: who it is, its
// ancestors up to PID 1 and what the scan makes of each, whether its tree
// is a finding and why, and every rule of the policy in order. A pass for
// explain asks who writes to every open stdin (Config.EveryStdin).
func Explain(p *run.Pass, pid int) (*audit.Explanation, error) {
	t, pol, plan := p.Table, p.Config.Policy, p.Plan
	s := t.Snap
	i := s.Index(pid)
	if i < 0 {
		return nil, &NoProcessError{pid}
	}
	proc := &s.Procs[i]
	rep := p.Report()

	e := &audit.Explanation{SchemaVersion: audit.SchemaVersion, Policy: rep.Policy, PID: pid,
		Cmdline: audit.CommandLine(s, proc), AgeSeconds: int64(s.Age(proc) / time.Second), RSSBytes: proc.RSS, Rules: []policy.RuleVerdict{}}
	e.UID, e.User = audit.ProcessUser(s, proc)
	e.Ancestors = ancestors(t.Result, i)

	switch {
	case proc.KernelThread():
		e.Verdict, e.Why = "kernel-thread", "a kernel thread: never a finding, never signalled"
	case proc.Zombie():
		e.Verdict, e.Why = "zombie", "a zombie: it has exited, and only its parent can clear it; never signalled"
	}
	if e.Verdict == "" {
		for k := range rep.Findings {
			if f := &rep.Findings[k]; slices.Contains(f.PIDs, pid) {
				e.Verdict, e.Finding = "finding", f
				e.Why = fmt.Sprintf("its tree (root %d) is orphaned and rule %q matches it", f.RootPID, f.Rule)
			}
		}
		for _, it := range plan.Items {
			if e.Finding != nil && it.Finding.Root.PID == e.Finding.RootPID {
				e.Rules = pol.Verdicts(s, it.Finding)
			}
		}
	}
	if e.Verdict == "" {
		for _, f := range plan.UnmatchedFindings {
			if slices.ContainsFunc(f.Members, func(m scan.Member) bool { return m.Proc.PID == pid }) {
				e.Verdict = "unmatched"
				e.Why = fmt.Sprintf("its tree (root %d) is orphaned, but no rule of the policy matches it: it is only listed (scan --all)", f.Root.PID)
				e.Finding = audit.NewFinding(s, f)
				e.Rules = pol.Verdicts(s, f)
			}
		}
	}
	if e.Verdict == "" && t.UID() != 0 {
		// Another user's orphaned tree: a reaper that is not root passes
		// over it, whatever it is.
		for k := range t.Result.Findings {
			f := &t.Result.Findings[k]
			if uid := s.UID(f.Root); uid != t.UID() && slices.ContainsFunc(f.Members, func(m scan.Member) bool { return m.Proc.PID == pid }) {
				e.Verdict = "out-of-scope"
				e.Why = fmt.Sprintf("its tree (root %d) is orphaned, but it is %s's: a reaper of %s acts on its own processes only; root's sees every user's", f.Root.PID, policy.UserText(uid), policy.UserText(t.UID()))
			}
		}
	}
	if e.Verdict == "" {
		e.Verdict, e.Why = "not-orphaned", notOrphaned(t.Result, i)
		if sess := sessionOf(PS(p), pid); sess != nil && !strings.Contains(e.Why, fmt.Sprintf("(pid %d)", sess.PID)) {
			// The session says it first (unless the reason names its
			// process already): what a person asks of a live session's
			// server is whose it is. The table's generic word for a tree
			// that is no orphan (a service, a login session…) says less
			// than the session does, and is left out.
			if strings.HasSuffix(e.Why, notAnOrphan) {
				e.Why = fmt.Sprintf("a process of the live %s session %s: that session holds it, so it is not an orphan", sess.Title, sessionName(sess))
			} else {
				e.Why = fmt.Sprintf("a process of the live %s session %s: %s", sess.Title, sessionName(sess), e.Why)
			}
		}
	}
	return e, nil
}

// sessionOf is the live session of v whose tree holds pid (nil: none).
func sessionOf(v *audit.PSView, pid int) *audit.PSSession {
	for k := range v.Sessions {
		sess := &v.Sessions[k]
		if sess.State == "ended" {
			continue
		}
		for _, q := range sess.Processes {
			if q.PID == pid {
				return sess
			}
		}
	}
	return nil
}

// sessionName is how a person tells a session: its id where its record
// gives one, its client's pid, and its state.
func sessionName(sess *audit.PSSession) string {
	if sess.SessionID != "" {
		return fmt.Sprintf("%s (pid %d, %s)", audit.Printable(sess.SessionID), sess.PID, sess.State)
	}
	return fmt.Sprintf("of pid %d (%s)", sess.PID, sess.State)
}

// ancestors lists the processes above index i, each with its role.
func ancestors(res *scan.Result, i int) []audit.Ancestor {
	t, s := res.Tree, res.Tree.Snap
	out := []audit.Ancestor{}
	t.Ancestors(i, func(j int) bool {
		a := &s.Procs[j]
		role := ""
		switch {
		case a.PID == 1:
			role = "init"
		case res.IsSubreaper(j):
			role = "subreaper"
		}
		if name, ok := res.LiveOwner(a); ok {
			role = strings.TrimSpace(role + " live owner " + name)
		}
		out = append(out, audit.Ancestor{PID: a.PID, Cmdline: audit.CommandLine(s, a), Role: role})
		return true
	})
	return out
}

// notAnOrphan ends the table's word for a tree below init or a subreaper
// that the scan does not take.
const notAnOrphan = "is not an orphan the scan takes: a service, a login session or a protected process, not an agent's leftover"

// notOrphaned says why the process at index i is in no finding.
func notOrphaned(res *scan.Result, i int) string {
	t, s := res.Tree, res.Tree.Snap
	p := &s.Procs[i]
	if why, ok := res.OwnedRun(p.PID); ok {
		return "a live owner's running run: " + why
	}
	if why, ok := res.InUse(p.PID); ok {
		return "reparented, but " + why + ": that process still speaks to it"
	}
	var owner string
	t.Ancestors(i, func(j int) bool {
		if name, ok := res.LiveOwner(&s.Procs[j]); ok {
			owner = fmt.Sprintf("%s (pid %d)", name, s.Procs[j].PID)
			return false
		}
		return true
	})
	if owner != "" {
		return "a live owner holds it: its ancestor " + owner + " is running"
	}
	parent := t.Parent(i)
	switch {
	case p.PID == 1:
		return "PID 1 is init"
	case parent < 0:
		return fmt.Sprintf("its parent %d is not visible here (hidepid, or another PID namespace): never treated as an orphan", p.PPID)
	}
	// The top of its tree: the last ancestor below init or a subreaper.
	top := i
	t.Ancestors(i, func(j int) bool {
		if s.Procs[j].PID == 1 || res.IsSubreaper(j) {
			return false
		}
		top = j
		return true
	})
	tp := t.Parent(top)
	if why, ok := res.LiveClient(s.Procs[top].PID); ok && tp >= 0 {
		if top == i {
			return "reparented (its parent " + fmt.Sprint(s.Procs[tp].PID) + "), but " + why
		}
		return fmt.Sprintf("its tree's top, %d, is reparented (its parent %d), but %s", s.Procs[top].PID, s.Procs[tp].PID, why)
	}
	if tp >= 0 && (s.Procs[tp].PID == 1 || res.IsSubreaper(tp)) {
		return fmt.Sprintf("its tree's top, %d, is a child of %d (%s) but %s",
			s.Procs[top].PID, s.Procs[tp].PID, audit.CommandLine(s, &s.Procs[tp]), notAnOrphan)
	}
	return fmt.Sprintf("its parent %d (%s) is alive and is neither init nor a subreaper: it was never reparented", s.Procs[parent].PID, audit.CommandLine(s, &s.Procs[parent]))
}
