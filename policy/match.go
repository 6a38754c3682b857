package policy

import (
	"fmt"
	"slices"
	"strings"

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
	if len(r.Owner) > 0 && !slices.Contains(r.Owner, f.Owner) {
		return false
	}
	// Cheap checks before those that may read a file.
	if r.MinAge > 0 && s.Age(f.Root) < r.MinAge {
		return false
	}
	if r.MinRSS > 0 && f.RSS < r.MinRSS {
		return false
	}
	// A process's real uid is a read of its status file as root: made
	// only for a rule with a "user" list.
	if r.UIDs != nil && !r.reaches(s, s.UID(f.Root), f) {
		return false
	}
	return r.Matchers.match(s, f.Root)
}

// reaches reports whether r's "user" list takes in a process of uid in
// the tree of f: any user when there is no list; the users it names; and
// with "@evidence", the users f's own evidence speaks for.
func (r *Rule) reaches(s *platform.Snapshot, uid uint32, f *scan.Finding) bool {
	switch {
	case r.UIDs == nil:
		return true
	case containsUID(r.UIDs, uid):
		return true
	}
	return r.Evidence && f != nil && f.SpokenFor(s, uid)
}

// match reports whether every matcher set holds for process p.
func (m *Matchers) match(s *platform.Snapshot, p *platform.Process) bool {
	if m.UIDs != nil && !m.Evidence && !containsUID(m.UIDs, s.UID(p)) {
		return false // a rule's "@evidence" is checked with its finding (Rule.reaches)
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

// WhyNot says, for a finding no rule matched, what kept each rule from it:
// the first condition of the rule that fails. At most three rules are
// named, those that share a reason with the finding first.
func (p *Policy) WhyNot(s *platform.Snapshot, f *scan.Finding) string {
	if len(p.Rules) == 0 {
		return "the policy has no rules"
	}
	var near, far []string
	for i := range p.Rules {
		r := &p.Rules[i]
		why := r.whyNot(s, f)
		if strings.HasPrefix(why, "none of its reasons") {
			far = append(far, fmt.Sprintf("rule %q: %s", r.Name, why))
		} else {
			near = append(near, fmt.Sprintf("rule %q: %s", r.Name, why))
		}
	}
	all := append(near, far...)
	if len(all) > 3 {
		all = append(all[:3], fmt.Sprintf("and %d more (reaper explain %d lists every rule)", len(all)-3, f.Root.PID))
	}
	return strings.Join(all, "; ")
}

// RuleVerdict is what one rule makes of a finding.
type RuleVerdict struct {
	Rule    string `json:"rule"`
	Matches bool   `json:"matches"`
	Decides bool   `json:"decides"` // the first rule that matches
	Why     string `json:"why"`     // why not, or what its match means
}

// Verdicts is every rule's verdict on f, in policy order: the first rule
// that matches decides; the ones after it are not consulted.
func (p *Policy) Verdicts(s *platform.Snapshot, f *scan.Finding) []RuleVerdict {
	out := make([]RuleVerdict, len(p.Rules))
	decided := ""
	for i := range p.Rules {
		r := &p.Rules[i]
		out[i].Rule = r.Name
		switch {
		case decided != "":
			out[i].Matches = r.matches(s, f)
			out[i].Why = fmt.Sprintf("not consulted: rule %q, before it, decides", decided)
			if out[i].Matches {
				out[i].Why = fmt.Sprintf("would match too, but rule %q, before it, decides", decided)
			}
		case r.matches(s, f):
			out[i].Matches, out[i].Decides = true, true
			out[i].Why = fmt.Sprintf("matches first: action %s", r.Action)
			decided = r.Name
		default:
			out[i].Why = r.whyNot(s, f)
		}
	}
	return out
}

// whyNot is the first condition of r that f fails.
func (r *Rule) whyNot(s *platform.Snapshot, f *scan.Finding) string {
	hasReason := false
	for _, w := range r.When {
		hasReason = hasReason || f.Has(w)
	}
	switch {
	case !hasReason:
		return fmt.Sprintf("none of its reasons is one of %s", joinAny(r.When))
	case len(r.Kind) > 0 && !slices.Contains(r.Kind, f.Kind):
		return fmt.Sprintf("kind %s is not one of %s", f.Kind, joinAny(r.Kind))
	case len(r.Owner) > 0 && !slices.Contains(r.Owner, f.Owner):
		if f.Owner == "" {
			return fmt.Sprintf("no owner claims it, and it names owners %s", joinAny(r.Owner))
		}
		return fmt.Sprintf("owner %s is not one of %s", f.Owner, joinAny(r.Owner))
	case r.MinAge > 0 && s.Age(f.Root) < r.MinAge:
		return fmt.Sprintf("younger than its min_age %s", r.MinAge)
	case r.MinRSS > 0 && f.RSS < r.MinRSS:
		return fmt.Sprintf("RSS %d MiB below its min_rss %d MiB", f.RSS>>20, r.MinRSS>>20)
	case !r.reaches(s, s.UID(f.Root), f):
		if r.Evidence {
			return fmt.Sprintf("uid %d not in its user list, and no evidence of that user's proves the tree", s.UID(f.Root))
		}
		return fmt.Sprintf("uid %d not in its user list", s.UID(f.Root))
	case r.Cmdline != nil && !r.Cmdline.MatchString(s.CommandLine(f.Root)):
		return "the command line does not match its cmdline"
	case r.Cgroup != nil && !r.Cgroup.MatchString(s.Cgroup(f.Root).Path()):
		return "the cgroup does not match its cgroup"
	}
	return "its env matchers do not hold"
}

// joinAny lists a rule's values as its policy file writes them: "a, b".
func joinAny[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
