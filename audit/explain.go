package audit

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// Explanation is `reaper explain PID`: why one process is, or is not, in
// a finding, and what every rule of the policy makes of its tree.
type Explanation struct {
	SchemaVersion int    `json:"schema_version"`
	Policy        string `json:"policy"`
	PID           int    `json:"pid"`
	UID           int64  `json:"uid"`
	User          string `json:"user"`
	Cmdline       string `json:"cmdline"`
	AgeSeconds    int64  `json:"age_seconds"`
	RSSBytes      uint64 `json:"rss_bytes"`
	// Ancestors are its parent, its parent's parent, … to PID 1 or the
	// first one this table cannot see, each with what the scan makes of it.
	Ancestors []Ancestor `json:"ancestors"`
	// Verdict is one of: finding (a rule matched its tree), unmatched (an
	// orphaned tree no rule matched), out-of-scope (another user's
	// orphaned tree, to a reaper that is not root), not-orphaned,
	// kernel-thread, zombie.
	Verdict string `json:"verdict"`
	// Why is the verdict in a sentence.
	Why string `json:"why"`
	// Finding is its tree's finding, as scan reports it (verdicts finding
	// and unmatched).
	Finding *Finding `json:"finding,omitempty"`
	// Rules is every rule's verdict on its tree, in policy order.
	Rules []policy.RuleVerdict `json:"rules"`
}

// Ancestor is one process above the one explained.
type Ancestor struct {
	PID     int    `json:"pid"`
	Cmdline string `json:"cmdline"`
	// Role is what the scan makes of it: "init", "subreaper", "live owner
	// NAME", or "".
	Role string `json:"role"`
}

// WriteTable writes the explanation for a person.
func (e *Explanation) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	user := e.User
	if user == "" {
		user = "uid " + strconv.FormatInt(e.UID, 10)
	}
	ew.printf("pid %d · %s · %s old · %s · policy: %s\n  %s\n", e.PID, Printable(user),
		HumanAge(time.Duration(e.AgeSeconds)*time.Second), HumanBytes(e.RSSBytes), Printable(e.Policy), clip(Printable(e.Cmdline)))
	if len(e.Ancestors) > 0 {
		ew.printf("\nAncestors:\n")
		for _, a := range e.Ancestors {
			role := ""
			if a.Role != "" {
				role = " (" + Printable(a.Role) + ")"
			}
			ew.printf("  %d%s  %s\n", a.PID, role, clip(Printable(a.Cmdline)))
		}
	}
	ew.printf("\n%s: %s\n", st.paint(sgrBold, Printable(e.Verdict)), Printable(e.Why))
	if f := e.Finding; f != nil {
		ew.printf("\nIts tree: root %d · %s · %s · %s\n", f.RootPID, Printable(f.Kind), Plural(len(f.PIDs), "process"), HumanBytes(f.RSSBytes))
		ew.printf("  reasons: %s\n", Printable(strings.Join(f.Reasons, ", ")))
		for _, ev := range f.Evidence {
			ew.printf("    - %s\n", Printable(ev))
		}
		if f.Owner != "" {
			ew.printf("  owner: %s\n", Printable(f.Owner))
		}
		if f.Rule != "" {
			ew.printf("  rule %s: %s", Printable(f.Rule), actionWords(f, st))
			if f.Detail != "" {
				ew.printf(" (%s)", Printable(f.Detail))
			}
			ew.printf("\n")
		}
	}
	if len(e.Rules) > 0 {
		ew.printf("\nEvery rule, in order:\n")
		for _, r := range e.Rules {
			mark := "  "
			if r.Decides {
				mark = "* "
			}
			ew.printf("  %s%s: %s\n", mark, Printable(r.Rule), Printable(r.Why))
		}
	}
	return ew.err
}
