package policy

import (
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Mode is how a run treats its plan.
type Mode string

// The modes of a run (README, "Command line and exit status").
const (
	ModeScan   Mode = "scan"
	ModeReap   Mode = "reap"
	ModeDryRun Mode = "dry-run"
)

// Outcome is what became of a finding.
type Outcome string

// The outcomes of a finding (README, "What a report looks like"). scan
// and plan produce reported, planned and refused; the reaper turns planned
// into killed, gone, failed or interrupted.
const (
	Reported Outcome = "reported"
	Planned  Outcome = "planned"
	Killed   Outcome = "killed"
	Gone     Outcome = "gone"
	Refused  Outcome = "refused"
	Failed   Outcome = "failed"
	// Interrupted: the run was interrupted (SIGINT, SIGTERM) before the
	// tree was confirmed gone; what it had stopped was continued. Its
	// exit status is 128+N of the signal, as a shell's.
	Interrupted Outcome = "interrupted"
	// Protected: a [[protect]] entry names a process of the tree. The
	// operator's decision, not a refusal: it fails no run and fires no
	// alert.
	Protected Outcome = "protected"
	// Deferred: refused by design — younger than min_age, or spared
	// because it became owned (an Item Refused and Benign). A report's
	// and the audit log's word; a plan's item stays Refused.
	Deferred Outcome = "deferred"
)

// Outcomes are every outcome, the one list of them: the schemas' enums
// and history's filter are held to it. In the order history sums them:
// what ended a tree, what needs a look, then decisions, plans and
// reports.
var Outcomes = []Outcome{Killed, Gone, Failed, Interrupted, Refused, Deferred, Protected, Planned, Reported}

// Item is one finding that matched a rule, with the decision about it.
type Item struct {
	Finding *scan.Finding
	Rule    *Rule
	Action  Action
	Outcome Outcome
	// Detail says why the item was refused or downgraded, when it was.
	Detail string
	// Benign: refused by design, not for doubt or failure — younger than
	// min_age, or spared because it became owned since the scan. A later
	// run may act on it; it does not make this run partial (exit 3).
	Benign bool
	// Due, for a tree younger than min_age, is when it reaches it: the
	// first run after that may act on it.
	Due time.Time
}

// Signals reports whether the item's rule asks for a signal.
func (it *Item) Signals() bool { return it.Action != Report }

// Plan is the policy's decision for one scan.
type Plan struct {
	Mode  Mode
	Items []Item
	// Unmatched counts findings no rule matched; they are not reported
	// (scan --all lists them, with WhyNot). UnmatchedFindings are they.
	Unmatched         int
	UnmatchedFindings []*scan.Finding
	// OutOfScope counts the findings of other users' trees a reaper that
	// is not root passed over: it can signal only its own uid's processes,
	// so they are neither its findings nor its refusals.
	OutOfScope int
	// InUse counts the reparented trees a live process outside them can
	// still write to the stdin of (scan.Result.InUse): no findings.
	InUse int
	// Own counts the trees rooted at the reaper or one of its ancestors
	// (a reaper started under a reparented process, or as a namespace's
	// init's child): never a finding, never listed, never signalled.
	Own int
	// Gate is the decision the plan was made with; the reaper asks it again
	// of every process before signalling it.
	Gate *Gate
}

// PlanOptions are the facts about the running reaper a plan needs.
type PlanOptions struct {
	Mode Mode
	// UID is the reaper's effective uid: by default only processes of this
	// uid are acted on (docs/policy.md, "user").
	UID uint32
	// Doubts is the state that could not be read: each refuses signals to
	// the trees it could speak for (a corrupt ledger may hold the very runs
	// it would mark as owned).
	Doubts []Doubt
}

// Matches are each finding's rule, before the decision: what a pass asks
// who writes to an open stdin of (Roots), between MatchAll and Decide.
type Matches struct {
	opt   PlanOptions
	gate  *Gate
	rules []*Rule
	roots []int
}

// Roots are the root pids of the findings a rule takes.
func (m *Matches) Roots() []int { return m.roots }

// Rule is the rule that takes finding i of the result, or nil.
func (m *Matches) Rule(i int) *Rule { return m.rules[i] }

// NamesUsers reports whether a rule or [[protect]] entry puts a condition
// on users: then matching reads the uid of every finding's root.
func (p *Policy) NamesUsers() bool {
	for _, m := range p.matchers() {
		if m.UIDs != nil {
			return true
		}
	}
	for _, r := range p.Rules {
		if r.UIDs != nil {
			return true
		}
	}
	return false
}

// MatchAll finds each finding's rule: the first phase of the decision,
// pure — it reads only what the table already holds (a pass loads the
// findings' details first, platform.Snapshot.Load).
func (p *Policy) MatchAll(res *scan.Result, opt PlanOptions) *Matches {
	s := res.Tree.Snap
	m := &Matches{opt: opt, gate: p.NewGate(res, opt.UID, opt.Doubts), rules: make([]*Rule, len(res.Findings))}
	for i := range res.Findings {
		if f := &res.Findings[i]; !m.gate.self[f.Root.PID] && (opt.UID == 0 || s.UID(f.Root) == opt.UID) {
			if m.rules[i] = p.Match(s, f); m.rules[i] != nil {
				m.roots = append(m.roots, f.Root.PID)
			}
		}
	}
	return m
}

// Decide decides, for each finding, whether a safety rule refuses acting
// on what its rule (m) asks: pure, after the pass has asked who writes to
// the matched findings' stdin (scan.Result.ResolveInUse), for a finding in
// use is none. Structural refusals (the tree holds the reaper, one of its
// ancestors, a live owner or a protected process) apply to every finding;
// the others (min_age, other users, unreadable state, max_actions) only
// where the rule would send a signal.
func (p *Policy) Decide(res *scan.Result, m *Matches) *Plan {
	s, g, opt, rules := res.Tree.Snap, m.gate, m.opt, m.rules
	pl := &Plan{Mode: opt.Mode, Gate: g}
	actions := 0
	for i := range res.Findings {
		f := &res.Findings[i]
		if g.self[f.Root.PID] {
			pl.Own++
			continue
		}
		if _, used := res.InUse(f.Root.PID); used {
			pl.InUse++
			continue
		}
		if opt.UID != 0 && s.UID(f.Root) != opt.UID {
			// A reaper that is not root acts on its own uid's trees
			// only: another user's is out of its scope, whatever a rule
			// says — it could not signal it.
			pl.OutOfScope++
			continue
		}
		rule := rules[i]
		if rule == nil {
			pl.Unmatched++
			pl.UnmatchedFindings = append(pl.UnmatchedFindings, f)
			continue
		}
		it := Item{Finding: f, Rule: rule, Action: rule.Action}
		if why := g.tree(s, f, g.structural); why != "" {
			it.Outcome, it.Detail = Refused, why
		} else if why := g.tree(s, f, g.protected); why != "" {
			it.Outcome, it.Detail = Protected, why
		} else if kept := keptBy(s, &it); kept != nil {
			it.Outcome, it.Detail = Protected, keptDetail(kept)
		} else if it.Signals() {
			if age := s.Age(f.Root); age < p.Defaults.MinAge {
				it.Outcome, it.Benign = Refused, true
				wait := p.Defaults.MinAge - age
				it.Due = s.Taken.Add(wait)
				it.Detail = fmt.Sprintf("younger than min_age %s (age %s): due in %s", p.Defaults.MinAge, age.Truncate(time.Second), roundUp(wait))
			} else if why := g.tree(s, f, func(s *platform.Snapshot, p *platform.Process) string { return g.User(s, p, rule, f) }); why != "" {
				it.Outcome, it.Detail = Refused, why
			} else if why := g.tree(s, f, g.Doubtful); why != "" {
				it.Outcome, it.Detail = Refused, why
			} else if why, doubt := res.StdinDoubt(f.Root.PID); doubt {
				it.Outcome, it.Detail = Refused, why
			} else if d := Uninterruptible(f); d != nil {
				// A kill does not take until the kernel lets it go: said,
				// left to a later pass, never a failure on every pass.
				it.Outcome, it.Benign = Refused, true
				it.Detail = fmt.Sprintf("pid %d is in uninterruptible sleep (state %c): no signal takes until the kernel lets it go; left for a later pass", d.PID, d.State)
			} else if actions >= p.Defaults.MaxActions {
				it.Action = Report
				it.Detail = fmt.Sprintf("max_actions (%d) reached in this run: reported only", p.Defaults.MaxActions)
			} else {
				actions++
			}
		}
		if it.Outcome == "" {
			it.Outcome = Reported
			if it.Signals() && opt.Mode != ModeScan {
				it.Outcome = Planned
			}
		}
		pl.Items = append(pl.Items, it)
	}
	return pl
}

// tree applies check to every member of f and returns the first refusal.
func (g *Gate) tree(s *platform.Snapshot, f *scan.Finding, check func(*platform.Snapshot, *platform.Process) string) string {
	for _, m := range f.Members {
		if why := check(s, m.Proc); why != "" {
			return why
		}
	}
	return ""
}

// ancestry returns the reaper's own pid, its ancestors' and its
// pipeline's other commands' (docs/safety.md).
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
	for pid := range s.Pipeline {
		self[pid] = true // the reaper's own job: `reaper reap | grep`
	}
	return self
}

// roundUp is d rounded up to the second: "due in 0s" would be a lie.
func roundUp(d time.Duration) time.Duration {
	if r := d.Truncate(time.Second); r < d {
		return r + time.Second
	}
	return d
}

// Uninterruptible returns the first member of f in uninterruptible sleep
// (D; U where the platform says so), or nil: a process whose signals wait
// until the kernel lets it go (an NFS server gone, a stuck device).
func Uninterruptible(f *scan.Finding) *platform.Process {
	for _, m := range f.Members {
		if m.Proc.State == 'D' || m.Proc.State == 'U' {
			return m.Proc
		}
	}
	return nil
}
