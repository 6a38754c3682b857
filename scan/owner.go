package scan

import (
	"fmt"

	"github.com/orphanreaper/reaper/platform"
)

// Named is an owner as a record names it: by a pid that a session file,
// lock, pid file, ledger or an environment mark wrote down, with what
// else the record knows of the process it meant.
type Named struct {
	// PID is the pid the record names.
	PID int
	// Start is the start identity the record pins the owner to
	// (Snapshot.Identity's form), "" when it records none.
	Start string
	// NotAfter, for a mark, is the process that carries it: its owner
	// started before it did, so a process at the pid that started later
	// is another one.
	NotAfter *platform.Process
	// User is whose process the owner is: the record's speaker, or the
	// marked process's user. The owner is that user's or root's.
	User uint32
	// AnyUser: the record is root's, which speaks of any user's process
	// (a root-owned supervisor's ledger).
	AnyUser bool
}

// OwnerGone is the one decision whether the owner a record names is
// gone: asked by every ledger, tie, pid mark and adapter, so that no
// source of proof can be fooled where another is not. The process at the
// pid now is the owner only when, in this order:
//
//  1. it exists and has not exited;
//  2. it started no later than the record says (its identity is the one
//     recorded, or it started before the process that carries the mark);
//  3. it is the owner's user's, or root's (the real uid).
//
// Each test that fails is proof the owner is gone: a later process at a
// reused pid is not the owner, and neither is another user's — a user who
// takes a dead client's pid with any process must not make that client's
// leftovers look owned. The order matters: a pid another user holds is
// evidence of the owner's end, not a doubt (docs/threat-model.md, "Pid
// reuse").
func OwnerGone(s *platform.Snapshot, o Named) (bool, string) {
	q := s.Get(o.PID)
	switch {
	case q == nil:
		return true, fmt.Sprintf("pid %d is gone", o.PID)
	case q.Zombie():
		return true, fmt.Sprintf("pid %d has exited (zombie)", o.PID)
	case o.Start != "" && s.Identity(q) != o.Start:
		return true, fmt.Sprintf("pid %d is another process now (started %s, the record says %s)", o.PID, s.Identity(q), o.Start)
	case o.NotAfter != nil && q.StartTicks > o.NotAfter.StartTicks:
		return true, fmt.Sprintf("pid %d is another process now (%s, started after pid %d that carries the mark)", o.PID, clip(s.CommandLine(q), 80), o.NotAfter.PID)
	}
	if uid := s.UID(q); !o.AnyUser && uid != o.User && uid != 0 && uid != platform.NoUID {
		return true, fmt.Sprintf("pid %d is another process now: it is uid %s's, and the owner was uid %d's", o.PID, uidText(uid), o.User)
	}
	return false, fmt.Sprintf("pid %d is alive", o.PID)
}

// RecordedBy is the owner a record of speaker's names, by pid and (where
// it has one) start identity: a user's record names that user's (or
// root's) process, root's any process.
func RecordedBy(speaker uint32, pid int, start string) Named {
	return Named{PID: pid, Start: start, User: speaker, AnyUser: speaker == 0}
}
