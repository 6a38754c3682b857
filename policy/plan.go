package policy

import (
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Mode is how a run treats its plan.
type Mode string

// The modes of SPEC §4.
const (
	ModeScan   Mode = "scan"
	ModeReap   Mode = "reap"
	ModeDryRun Mode = "dry-run"
)

// Outcome is what became of a finding.
type Outcome string

// The outcomes of SPEC §4. scan and plan produce reported, planned and
// refused; the reaper turns planned into killed, gone or failed.
const (
	Reported Outcome = "reported"
	Planned  Outcome = "planned"
	Killed   Outcome = "killed"
	Gone     Outcome = "gone"
	Refused  Outcome = "refused"
	Failed   Outcome = "failed"
)

// Item is one finding that matched a rule, with the decision about it.
type Item struct {
	Finding *scan.Finding
	Rule    *Rule
	Action  Action
	Outcome Outcome
	// Detail says why the item was refused or downgraded, when it was.
	Detail string
}

// Plan is the policy's decision for one scan.
type Plan struct {
	Mode  Mode
	Items []Item
	// Unmatched counts findings no rule matched; they are not reported.
	Unmatched int
}

// PlanOptions are the facts about the running reaper a plan needs.
type PlanOptions struct {
	Mode Mode
	// UID is the reaper's effective uid: by default only processes of this
	// uid are acted on (SPEC §9.12).
	UID uint32
	// Doubt, when set, refuses every signal with this reason: something the
	// decision depends on could not be read (a corrupt ledger may hold the
	// very runs it would mark as owned).
	Doubt string
}

// Plan decides, for each finding, which rule applies and whether a safety
// rule refuses acting on it. Structural refusals (the tree holds the reaper,
// one of its ancestors, a live owner or a protected process) apply to every
// finding; the others (min_age, other users, max_actions) only where the
// rule would send a signal.
func (p *Policy) Plan(res *scan.Result, opt PlanOptions) *Plan {
	s := res.Tree.Snap
	pl := &Plan{Mode: opt.Mode}
	self := ancestry(res)
	actions := 0
	for i := range res.Findings {
		f := &res.Findings[i]
		rule := p.Match(s, f)
		if rule == nil {
			pl.Unmatched++
			continue
		}
		it := Item{Finding: f, Rule: rule, Action: rule.Action}
		if why := p.refuse(res, f, self); why != "" {
			it.Outcome, it.Detail = Refused, why
		} else if it.Action != Report {
			if opt.Doubt != "" {
				it.Outcome, it.Detail = Refused, opt.Doubt
			} else if why := p.refuseAction(s, f, rule, opt); why != "" {
				it.Outcome, it.Detail = Refused, why
			} else if actions >= p.Defaults.MaxActions {
				it.Action = Report
				it.Detail = fmt.Sprintf("max_actions (%d) reached in this run: reported only", p.Defaults.MaxActions)
			} else {
				actions++
			}
		}
		if it.Outcome == "" {
			it.Outcome = Reported
			if it.Action != Report && opt.Mode != ModeScan {
				it.Outcome = Planned
			}
		}
		pl.Items = append(pl.Items, it)
	}
	return pl
}

// ancestry returns the reaper's own pid and its ancestors' (SPEC §9.1).
func ancestry(res *scan.Result) map[int]bool {
	s := res.Tree.Snap
	self := map[int]bool{}
	if s.Self == 0 {
		return self
	}
	self[s.Self] = true
	if i := s.Index(s.Self); i >= 0 {
		res.Tree.Ancestors(i, func(j int) bool {
			self[s.Procs[j].PID] = true
			return true
		})
	}
	return self
}

// refuse returns why no signal may reach f's tree, or "".
func (p *Policy) refuse(res *scan.Result, f *scan.Finding, self map[int]bool) string {
	s := res.Tree.Snap
	for _, m := range f.Members {
		proc := m.Proc
		switch {
		case proc.PID <= 1:
			return fmt.Sprintf("the tree holds pid %d", proc.PID)
		case proc.PID == s.Self:
			return fmt.Sprintf("the tree holds the reaper itself (pid %d)", proc.PID)
		case self[proc.PID]:
			return fmt.Sprintf("the tree holds the reaper's ancestor %d (%s)", proc.PID, proc.Comm)
		}
		if name, ok := res.LiveOwner(proc); ok {
			return fmt.Sprintf("the tree holds live owner %s (pid %d)", name, proc.PID)
		}
		if why, ok := res.OwnedRun(proc.PID); ok {
			return fmt.Sprintf("the tree holds pid %d, %s", proc.PID, why)
		}
		if pr := p.Protected(s, proc); pr != nil {
			return fmt.Sprintf("pid %d (%s) is protected by %q", proc.PID, proc.Comm, pr.Name)
		}
	}
	return ""
}

// refuseAction returns why the rule's signal may not be sent, or "".
func (p *Policy) refuseAction(s *platform.Snapshot, f *scan.Finding, rule *Rule, opt PlanOptions) string {
	if age := s.Age(f.Root); age < p.Defaults.MinAge {
		return fmt.Sprintf("younger than min_age %s (age %s)", p.Defaults.MinAge, age.Truncate(time.Second))
	}
	for _, m := range f.Members {
		if m.Proc.UID == opt.UID {
			continue
		}
		if rule.UIDs == nil || !containsUID(rule.UIDs, m.Proc.UID) {
			return fmt.Sprintf("pid %d belongs to uid %d; only a rule's user list reaches other users", m.Proc.PID, m.Proc.UID)
		}
	}
	return ""
}
