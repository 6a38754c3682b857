package run

import (
	"context"
	"slices"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Pass is one pass over the process table and the decision about it: the
// value every verb reads. scan reports it, explain and pty are views of
// it, reap acts on it and returns it with its results, a watch re-arms
// from what its reap returned.
type Pass struct {
	*Table
	Config Config
	Plan   *policy.Plan
}

// Scan is one pass, its phases in order:
//
//  1. the table (platform.ReadSnapshot), with the clients' state read
//     beside it (gather.Begin);
//  2. the evidence: the ledgers and state the table's owners and orphans
//     lead to (gather.Load), before the scan;
//  3. attribution (scan.Scan): the orphaned trees, who owns them, what
//     each is;
//  4. advice, when Config.Advise asks (scan.Result.Advise): the clients'
//     advisers over the final findings, with a second's sample of the
//     live gateways' MCP pools;
//  5. the decision (Table.Decide): the findings' details read, each
//     finding's rule, who writes to the matched stdin, then policy's
//     verdict on the table frozen.
//
// mode is what the run will do with the plan.
func Scan(ctx context.Context, cfg Config, mode policy.Mode) (*Pass, error) {
	t, err := Collect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Advise {
		t.Result.Advise(t.Evidence.Advisers, sampleActivity(t.Snap))
	}
	return &Pass{Table: t, Config: cfg, Plan: t.Decide(cfg, mode)}, nil
}

// Decide makes the plan of t under cfg's policy, for mode: the one place
// a plan's options are made. Its phases:
//
//   - cfg.Only drops the findings a run does not own (reaper run);
//   - each finding's rule (policy.MatchAll), its root's details read
//     first (the table's one read after the scan, in two steps:
//     platform.Snapshot.Load), on the table frozen (Snapshot.Freeze: a
//     read of what was not loaded is a miss, and fails under test);
//   - the details of the members of the findings a rule takes, for the
//     gate;
//   - who writes to an open stdin, asked of the findings a rule takes
//     (scan.Result.ResolveInUse), of every finding for explain
//     (EveryStdin), and of the unmatched for scan --all (All);
//   - the decision (policy.Decide), on the table frozen again.
func (t *Table) Decide(cfg Config, mode policy.Mode) *policy.Plan {
	res, pol := t.Result, cfg.Policy
	if cfg.Only != nil {
		res.Findings = slices.DeleteFunc(res.Findings, func(f scan.Finding) bool { return !cfg.Only(&f) })
	}
	loadRoots(t, pol)
	thaw := t.Snap.Freeze()
	m := pol.MatchAll(res, policy.PlanOptions{Mode: mode, UID: t.UID(), Doubts: t.Doubts})
	thaw()
	loadMatched(t, pol, m)
	if cfg.EveryStdin {
		res.ResolveAllInUse() // a person asks: who writes to every open stdin
	} else {
		res.ResolveInUse(m.Roots())
	}
	thaw = t.Snap.Freeze()
	plan := pol.Decide(res, m)
	thaw()
	if cfg.All && len(plan.UnmatchedFindings) > 0 {
		// Those in use are no orphans: asked now, for the trees listed.
		roots := make([]int, len(plan.UnmatchedFindings))
		for k, f := range plan.UnmatchedFindings {
			roots[k] = f.Root.PID
		}
		res.ResolveInUse(roots)
		plan.UnmatchedFindings = slices.DeleteFunc(plan.UnmatchedFindings, func(f *scan.Finding) bool {
			_, used := res.InUse(f.Root.PID)
			return used
		})
		plan.Unmatched = len(plan.UnmatchedFindings)
	}
	return plan
}

// loadRoots reads what matching a rule asks of each finding's root: its
// details (most read by the scan already), and its uid where the reaper
// is not root (its scope) or the policy names users.
func loadRoots(t *Table, pol *policy.Policy) {
	roots := make([]*platform.Process, len(t.Result.Findings))
	for i, f := range t.Result.Findings {
		roots[i] = f.Root
	}
	t.Snap.Load(roots, t.UID() != 0 || pol.NamesUsers())
}

// loadMatched reads what deciding asks of the members of each finding a
// rule takes: their details for the gate, and their uids where the gate
// asks them — a rule that signals, or a policy that names users (a
// [[protect]] entry's user list); as root each uid is a status file, not
// read for a tree a rule only reports.
func loadMatched(t *Table, pol *policy.Policy, m *policy.Matches) {
	var reported, signalled []*platform.Process
	users := pol.NamesUsers()
	for i, f := range t.Result.Findings {
		r := m.Rule(i)
		if r == nil {
			continue
		}
		for _, mb := range f.Members {
			if users || r.Action != policy.Report {
				signalled = append(signalled, mb.Proc)
			} else {
				reported = append(reported, mb.Proc)
			}
		}
	}
	t.Snap.Load(reported, false)
	t.Snap.Load(signalled, true)
}

// Report makes the pass's report at once, from its facts.
func (p *Pass) Report() *audit.Report {
	return audit.NewReport(p.facts(), p.Config.Policy, p.Table.Snap, nil)
}

// facts reads what the pass's report says: every process it names is read
// now — command lines, terminals held, activity — so that nothing is read
// after (a reap reads them before it acts, and makes its report after).
// With Config.All they list the trees no rule matched too.
func (p *Pass) facts() *audit.Facts {
	t, plan := p.Table, p.Plan
	in := inspect(t, plan)
	return audit.Read(audit.Reading{Policy: p.Config.Policy, Result: t.Result, Plan: plan, Problems: t.Problems, Unmatched: p.Config.All,
		PTYHolds: in.holds, PTYStates: in.states, PSS: in.pss, Activity: in.activity, Waits: waitChannels(t, plan)})
}

// waitChannels says where each benign tree left for its uninterruptible
// sleep waits, by root: the kernel function its process sleeps in
// (Snapshot.Wchan).
func waitChannels(t *Table, plan *policy.Plan) map[int]string {
	out := map[int]string{}
	for _, it := range plan.Items {
		d := policy.Uninterruptible(it.Finding)
		if d == nil || !it.Benign {
			continue
		}
		if w := t.Snap.Wchan(d); w != "" {
			out[it.Finding.Root.PID] = w
		}
	}
	return out
}
