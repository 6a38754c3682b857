package scan

import (
	"fmt"

	"github.com/orphanreaper/reaper/platform"
)

// Users speak only for themselves. Every piece of evidence read from a file
// has a speaker, the uid that owns the file (ledger.Ledger.Speaker, the
// owner of a client's state dir): root's word is about any process, any
// other uid's only about processes whose real uid is that uid. A user can
// write anything in their own files — a lease naming a root daemon, a
// registry row whose "parent" is a dead pid and whose "child" is
// systemd-udevd, a lock that says a gateway is alive — and none of it may
// make reaper signal another user's process, spare one, or hold one back.
//
// speaks is the one place that decides it; every claim of every source
// (runs, owners, gateways, configured servers) is asked here, and what is
// dropped is counted, never silently lost.

// Ignored counts the claims one speaker made about another uid's
// processes, which the scan dropped.
type Ignored struct {
	Speaker, UID uint32
	Count        int
	// First is the first such claim, in words.
	First string
}

// String says what was dropped, for the report's warnings.
func (ig Ignored) String() string {
	s := fmt.Sprintf("state of uid %d %s: ignored (a user's state speaks only for that user's processes)", ig.Speaker, ig.First)
	if ig.Count > 1 {
		s += fmt.Sprintf("; %d claims like it", ig.Count)
	}
	return s
}

// speaks reports whether evidence of speaker may be taken about p, and
// counts the claim when it may not: what names what it claimed, where
// from. A process whose owner could not be read is nobody's to speak for
// but root's.
func (r *Result) speaks(speaker uint32, p *platform.Process, what string) bool {
	if !r.foreign(speaker, p) {
		return true
	}
	uid := r.Tree.Snap.UID(p)
	r.ignore(speaker, uid, fmt.Sprintf("(%s) names pid %d of uid %s", what, p.PID, uidText(uid)))
	return false
}

// foreign reports whether p is not speaker's to speak for: another uid's
// than a user speaker's (root's word is about any process).
func (r *Result) foreign(speaker uint32, p *platform.Process) bool {
	return speaker != 0 && r.Tree.Snap.UID(p) != speaker
}

func (r *Result) ignore(speaker, uid uint32, msg string) {
	for k := range r.Ignored {
		if ig := &r.Ignored[k]; ig.Speaker == speaker && ig.UID == uid {
			ig.Count++
			return
		}
	}
	r.Ignored = append(r.Ignored, Ignored{Speaker: speaker, UID: uid, Count: 1, First: msg})
}

func uidText(uid uint32) string {
	if uid == platform.NoUID {
		return "unknown"
	}
	return fmt.Sprint(uid)
}
