package policy

import (
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Plan is a pass's decision as run makes it (run.Table.Decide), for the
// tests: the findings' details loaded, rules matched, who writes to the
// matched stdin asked, then the decision.
func (p *Policy) Plan(res *scan.Result, opt PlanOptions) *Plan {
	var procs []*platform.Process
	for _, f := range res.Findings {
		for _, m := range f.Members {
			procs = append(procs, m.Proc)
		}
	}
	res.Tree.Snap.Load(procs, true)
	m := p.MatchAll(res, opt)
	res.ResolveInUse(m.Roots())
	return p.Decide(res, m)
}
