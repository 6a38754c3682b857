package watch

import (
	"sort"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
)

// stormWatch says when a parent starts processes faster than rate a
// second for sustain seconds in a row (policy storm_rate, storm_for),
// from a count of each second's new processes by parent. It never
// signals: it says, once a storm starts and once it ends.
type stormWatch struct {
	rate    int
	sustain int
	seen    string // how the counts are had (audit.Storm.Seen)
	// mine says whether a uid's storms are the watch's to say (root's:
	// every user's; a user's: their own).
	mine func(uid uint32) bool
	// about reads a parent: its comm, command line and uid.
	about func(pid int) (comm, command string, uid uint32, ok bool)
	say   func(s audit.Storm, over bool)

	// forked is told, at most once a second, that something forked
	// since the last: the kernel's fork events, or its last pid sampled
	// and moved — and once as either starts, for what came before.
	// Closed where neither can be had.
	forked chan struct{}

	// adopter is the init whose adoptions the watch follows (reaper
	// run's; 0: none): like PID 1, a parent that did not fork what it
	// holds.
	adopter int

	mu     sync.Mutex
	streak map[stormKey]int          // what is counted → seconds in a row over rate
	now    map[stormKey]*audit.Storm // the storms said and not yet over
	total  uint64
}

// stormKey is what a second's count is of: a parent that forked (PID),
// a user's processes whoever forked them (UID alone: many parents, a
// chain of fork-and-exit links), processes of a user found under an
// adopter that did not fork them (Adopter, UID), or the PID namespace's
// processes where nothing is known of them (PID -1).
type stormKey struct {
	PID     int
	UID     int64 // -1: not known, or not what is counted
	Adopter int
}

// parentKey is a parent's count.
func parentKey(pid int) stormKey { return stormKey{PID: pid, UID: -1} }

// second takes one second's counts. A parent over the rate is named; a
// user over it is named by the user when none of their parents is (many
// parents, or chains); processes an adopter holds are the user's,
// "parent unknown", never the adopter's; the namespace's count alone is
// said where nothing else is known.
func (w *stormWatch) second(counts map[stormKey]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rate <= 0 {
		return // storm_rate = 0: never said
	}
	for k := range w.streak {
		if counts[k] >= w.rate {
			continue
		}
		delete(w.streak, k)
		if s, said := w.now[k]; said {
			delete(w.now, k)
			w.say(*s, true)
		}
	}
	keys := make([]stormKey, 0, len(counts))
	for k, n := range counts {
		if n >= w.rate {
			keys = append(keys, k)
		}
	}
	// Parents first, then adopters' holdings, then users: a user's storm
	// is said only where no parent of theirs is said.
	sort.Slice(keys, func(i, j int) bool { return keyOrder(keys[i]) < keyOrder(keys[j]) })
	for _, k := range keys {
		n := counts[k]
		w.streak[k]++
		if s, said := w.now[k]; said {
			s.Rate, s.For = n, time.Duration(w.streak[k])*time.Second
			continue
		}
		if w.streak[k] < w.sustain {
			continue
		}
		s := audit.Storm{Rate: n, For: time.Duration(w.streak[k]) * time.Second, Threshold: w.rate, Seen: w.seen, UID: k.UID}
		switch {
		case k.PID > 0:
			comm, command, uid, ok := w.about(k.PID)
			if !ok || !w.mine(uid) {
				continue // gone, or another user's (a user's watch)
			}
			s.PID, s.Comm, s.Command, s.UID, s.User = k.PID, comm, audit.UserText(command, audit.MaxCmdline), int64(uid), policy.UserName(uid)
		case k.UID >= 0:
			if !w.mine(uint32(k.UID)) || k.Adopter == 0 && w.parentSaid(k.UID) {
				continue
			}
			s.Adopter, s.User = k.Adopter, policy.UserName(uint32(k.UID))
		}
		w.now[k] = &s
		w.total++
		w.say(s, false)
	}
}

// keyOrder sorts parents before adopters' holdings before users before
// the namespace's count.
func keyOrder(k stormKey) int {
	switch {
	case k.PID > 0:
		return 0
	case k.Adopter > 0:
		return 1
	case k.UID >= 0:
		return 2
	}
	return 3
}

// parentSaid reports whether a parent of uid's, or an adopter of their
// processes, is in a storm said now
// (w.mu held).
func (w *stormWatch) parentSaid(uid int64) bool {
	for k, s := range w.now {
		if (k.PID > 0 || k.Adopter > 0) && s.UID == uid {
			return true
		}
	}
	return false
}

// set takes the policy's storm_rate and storm_for (at the start, and on
// a reload).
func (w *stormWatch) set(d policy.Defaults) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rate, w.sustain = d.StormRate, max(int(d.StormFor/time.Second), 1)
}

// storms are the storms going on, how many were said since the start,
// and how they are seen ("" until it is known, or where none can be).
func (w *stormWatch) storms() ([]audit.Storm, uint64, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]audit.Storm, 0, len(w.now))
	for _, s := range w.now {
		out = append(out, *s)
	}
	return out, w.total, w.seen
}
