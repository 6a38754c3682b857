package policy

import (
	"fmt"

	"github.com/orphanreaper/reaper/platform"
)

// KeepEnv is the variable by which a process asks to be kept: a daemon
// that detaches on purpose to stay warm across sessions sets
// REAPER_KEEP=1 in its own environment, or its launcher sets it for it.
// Its tree is then never signalled, by any verb, unless a rule says
// override_keep = true.
const KeepEnv = "REAPER_KEEP"

// keptBy returns the member of it's tree that keeps it by its own word —
// one whose environment carries REAPER_KEEP=1 and whose real uid is the
// tree's root's — or nil. A mark speaks only for its own user's tree: one
// user's process in another user's tree, or in root's, keeps nothing. It
// is asked where the item's rule would signal (the pass has loaded its
// members' uids) and does not say override_keep.
func keptBy(s *platform.Snapshot, it *Item) *platform.Process {
	if !it.Signals() || it.Rule.OverrideKeep {
		return nil
	}
	f := it.Finding
	owner := s.UID(f.Root)
	for _, m := range f.Members {
		if marked(s, m.Proc) && s.UID(m.Proc) == owner {
			return m.Proc
		}
	}
	return nil
}

// marked reports whether p's environment carries REAPER_KEEP=1.
func marked(s *platform.Snapshot, p *platform.Process) bool {
	v, ok := s.Getenv(p, KeepEnv)
	return ok && v == "1"
}

// keptDetail says which process keeps a tree, for every view.
func keptDetail(p *platform.Process) string {
	return fmt.Sprintf("kept by its own word: pid %d (%s) carries %s=1", p.PID, p.Comm, KeepEnv)
}
