package run

import (
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

	mu     sync.Mutex
	streak map[int]int          // parent → seconds in a row over rate
	now    map[int]*audit.Storm // the storms said and not yet over
	total  uint64
}

// second takes one second's counts (parent → processes started; -1 for
// the host's count where no parent is known).
func (w *stormWatch) second(counts map[int]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rate <= 0 {
		return // storm_rate = 0: never said
	}
	for pid := range w.streak {
		if counts[pid] >= w.rate {
			continue
		}
		delete(w.streak, pid)
		if s, said := w.now[pid]; said {
			delete(w.now, pid)
			w.say(*s, true)
		}
	}
	for pid, n := range counts {
		if n < w.rate {
			continue
		}
		w.streak[pid]++
		if s, said := w.now[pid]; said {
			s.Rate, s.For = n, time.Duration(w.streak[pid])*time.Second
			continue
		}
		if w.streak[pid] < w.sustain {
			continue
		}
		s := audit.Storm{PID: max(pid, 0), Rate: n, For: time.Duration(w.streak[pid]) * time.Second, Threshold: w.rate, Seen: w.seen, UID: -1}
		if pid > 0 {
			comm, command, uid, ok := w.about(pid)
			if !ok || !w.mine(uid) {
				continue // gone, or another user's (a user's watch)
			}
			s.Comm, s.Command, s.UID, s.User = comm, audit.UserText(command, audit.MaxCmdline), int64(uid), policy.UserName(uid)
		}
		w.now[pid] = &s
		w.total++
		w.say(s, false)
	}
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
