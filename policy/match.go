package policy

import (
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Match returns the first rule that matches f, or nil. A rule matches when f
// has one of its reasons and every matcher it sets holds for f's root.
func (p *Policy) Match(s *platform.Snapshot, f *scan.Finding) *Rule {
	for i := range p.Rules {
		if p.Rules[i].matches(s, f) {
			return &p.Rules[i]
		}
	}
	return nil
}

func (r *Rule) matches(s *platform.Snapshot, f *scan.Finding) bool {
	hasReason := false
	for _, w := range r.When {
		hasReason = hasReason || f.Has(w)
	}
	if !hasReason {
		return false
	}
	if len(r.Kind) > 0 {
		kindOK := false
		for _, k := range r.Kind {
			kindOK = kindOK || k == f.Kind
		}
		if !kindOK {
			return false
		}
	}
	// Cheap checks before those that may read a file.
	if r.MinAge > 0 && s.Age(f.Root) < r.MinAge {
		return false
	}
	if r.MinRSS > 0 && f.RSS < r.MinRSS {
		return false
	}
	return r.Matchers.match(s, f.Root)
}

// match reports whether every matcher set holds for process p.
func (m *Matchers) match(s *platform.Snapshot, p *platform.Process) bool {
	if m.UIDs != nil && !containsUID(m.UIDs, s.UID(p)) {
		return false
	}
	if m.Cmdline != nil && !m.Cmdline.MatchString(s.CommandLine(p)) {
		return false
	}
	if len(m.Env) > 0 {
		envOK := false
		for _, e := range m.Env {
			if v, ok := s.Getenv(p, e.Name); ok && (e.Value == nil || e.Value.MatchString(v)) {
				envOK = true
				break
			}
		}
		if !envOK {
			return false
		}
	}
	if m.Cgroup != nil && !m.Cgroup.MatchString(s.Cgroup(p).Path()) {
		return false
	}
	return true
}

func containsUID(uids []uint32, uid uint32) bool {
	for _, u := range uids {
		if u == uid {
			return true
		}
	}
	return false
}

// Protected returns the [[protect]] entry that names p, or nil.
func (p *Policy) Protected(s *platform.Snapshot, proc *platform.Process) *Protect {
	for i := range p.Protect {
		if p.Protect[i].Matchers.match(s, proc) {
			return &p.Protect[i]
		}
	}
	return nil
}
