package gather

import (
	"fmt"

	"github.com/orphanreaper/reaper/policy"
)

// Problem is state that could not be read, and the doubt it casts.
type Problem struct {
	Msg   string
	Doubt policy.Doubt
	// user, for a dir the run's budget left unread, is whose budget it
	// was (+1; 0 for any other problem): Messages says those once per user.
	user uint64
	// spent: left unread because the run's time for reading ran out;
	// Messages says those once for every user.
	spent bool
}

// Doubts groups the problems into the plan's doubts: one per user (or for
// all, for root's own ledgers), saying how many files could not be read
// and naming the first.
func (s *Set) Doubts() []policy.Doubt {
	type key struct {
		all bool
		uid uint32
	}
	var order []key
	count := map[key]int{}
	first := map[key]string{}
	for _, p := range s.Problems {
		k := key{p.Doubt.All, p.Doubt.UID}
		if count[k] == 0 {
			order = append(order, k)
			first[k] = p.Msg
		}
		count[k]++
	}
	var out []policy.Doubt
	for _, k := range order {
		whose := "a ledger"
		if !k.all {
			whose = fmt.Sprintf("state of uid %d", k.uid)
		}
		reason := fmt.Sprintf("%s could not be read (%s): a run it owns could be in this tree", whose, first[k])
		if n := count[k]; n > 1 {
			reason = fmt.Sprintf("%s could not be read (%d files; first %s): a run it owns could be in this tree", whose, n, first[k])
		}
		out = append(out, policy.Doubt{Reason: reason, All: k.all, UID: k.uid})
	}
	return out
}

// Messages are the problems' texts, for the report's errors: the dirs the
// run's budget left unread once per user, with how many more there were
// (a user with a subordinate range can name thousands), and those the
// run's time for reading left unread once for all users (a loaded host
// with a thousand users must not make a thousand lines).
func (s *Set) Messages() []string {
	var out []string
	first := map[uint64]int{} // user+1 → its message in out
	more := map[uint64]int{}
	spent, spentAt := 0, -1
	for _, p := range s.Problems {
		if p.spent {
			if spentAt < 0 {
				spentAt = len(out)
				out = append(out, p.Msg)
			} else {
				spent++
			}
			continue
		}
		if p.user == 0 {
			out = append(out, p.Msg)
			continue
		}
		if _, seen := first[p.user]; seen {
			more[p.user]++
			continue
		}
		first[p.user] = len(out)
		out = append(out, p.Msg)
	}
	for u, n := range more {
		out[first[u]] += fmt.Sprintf(" (and %d more state dirs of uid %d's left unread like it: the uids' doubt)", n, u-1)
	}
	if spent > 0 {
		out[spentAt] += fmt.Sprintf(" (and %d more state dirs left unread like it, of any user: each its own uid's doubt)", spent)
	}
	return out
}
