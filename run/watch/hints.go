package watch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
)

// hintBudget keeps, per uid, when its exits last triggered passes.
type hintBudget struct {
	byUID map[uint32][]time.Time
	last  time.Time // the last pass a user's exit triggered
}

// allow says when an exit of uid's process may trigger a pass: now (at
// is now), at a later time (at: the global pace's next turn — the hint
// is held until then), or never (ok false: past uid's own budget). It
// counts the exit when it may.
func (b *hintBudget) allow(uid uint32, now time.Time) (at time.Time, ok bool) {
	if uid == 0 {
		return now, true
	}
	if b.byUID == nil {
		b.byUID = map[uint32][]time.Time{}
	}
	recent := b.byUID[uid][:0]
	for _, t := range b.byUID[uid] {
		if now.Sub(t) < hintWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) >= perUID {
		if len(recent) == 0 {
			delete(b.byUID, uid) // a refused exit is not counted: no entry for it
		} else {
			b.byUID[uid] = recent
		}
		return time.Time{}, false
	}
	at = b.pace(now)
	b.byUID[uid] = append(recent, at)
	if len(b.byUID) > 4096 { // forget the oldest uids' counts: none of them is in its window's budget any more
		for u, ts := range b.byUID {
			if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= hintWindow {
				delete(b.byUID, u)
			}
		}
	}
	return at, true
}

// pace is when a pass a user's hint asks for may come: now, or the
// global pace's next turn (one pass per userGap for all users), and
// takes that turn.
func (b *hintBudget) pace(now time.Time) (at time.Time) {
	switch {
	case !b.last.IsZero() && !b.last.Before(now):
		at = b.last // a pass is held for then already: this exit is one more for it
	case now.Sub(b.last) < userGap:
		at = b.last.Add(userGap) // held for the pace: another user's pass was just now
	default:
		at = now
	}
	b.last = at
	return at
}

// timers are the watch's clocks: the backstop, the next min_age, the
// hints held back until Gap after the last pass, and the service
// manager's watchdog.
type timers struct {
	backstop, due, held, retry *time.Timer
	watchdog                   *time.Ticker
	lastPass                   time.Time // when the last pass ended
	pending                    bool      // a hint not yet passed on
	firstExit                  time.Time // the first owner's exit not yet passed on
}

func newTimers() *timers {
	t := &timers{backstop: time.NewTimer(time.Hour), due: time.NewTimer(time.Hour), held: time.NewTimer(time.Hour), retry: time.NewTimer(time.Hour)}
	t.due.Stop()
	t.held.Stop()
	t.retry.Stop()
	return t
}

// minAge sets the min_age clock to due (zero: off).
func (t *timers) minAge(due time.Time) {
	t.due.Stop()
	if !due.IsZero() {
		t.due.Reset(max(time.Until(due), 0) + 50*time.Millisecond) // past the tick the age is counted in
	}
}

// wait waits for the next reason to pass — a hint, a min_age, the
// backstop, a reload — and returns it, or stop when ctx ends. A hint
// passes at once when the last pass ended Gap ago or more, at Gap after
// it otherwise: the hints that come while a pass runs wait in their
// channels and are one pass together.
func (w *watcher) wait(ctx context.Context, t *timers, hup <-chan os.Signal) (string, bool) {
	var exits <-chan pwatch.Target
	if w.exits != nil {
		exits = w.exits.C()
	}
	var dirs <-chan pwatch.Dir
	if w.dirs != nil {
		dirs = w.dirs.C()
	}
	// hint holds a hint that came at now until Gap after the last pass
	// (no time at all when that is past); the hints that follow before
	// then join it.
	hint := func(now time.Time) {
		if t.pending {
			return
		}
		t.pending = true
		t.held.Reset(max(t.lastPass.Add(w.cfg.Gap).Sub(now), pwatch.Settle))
	}
	// paced holds a user's hint until at, the global pace's next turn:
	// a pass already held comes sooner and covers it (it passes after
	// the exit); else one is held until then.
	paced := func(now, at time.Time) {
		if !at.After(now) {
			hint(now)
			return
		}
		if t.pending {
			return
		}
		t.pending = true
		t.held.Reset(max(at.Sub(now), t.lastPass.Add(w.cfg.Gap).Sub(now), pwatch.Settle))
	}
	var watchdog <-chan time.Time
	if w.cfg.Watchdog > 0 {
		if t.watchdog == nil {
			t.watchdog = time.NewTicker(w.cfg.Watchdog)
		}
		watchdog = t.watchdog.C
	}
	for {
		select {
		case <-ctx.Done():
			return "", true
		case gone := <-exits:
			now := time.Now()
			if t.pending && pwatch.Settle == 0 {
				// A pass is held already and comes after this exit, and
				// nothing here needs time to settle: it covers the exit,
				// at no cost to its user's budget.
				w.log.Debug("an owner exited; a pass is held already", "pid", gone.PID, "uid", gone.UID)
				if t.firstExit.IsZero() {
					t.firstExit = now
				}
				continue
			}
			at, ok := w.hints.allow(gone.UID, now)
			if !ok && w.exits.Lost() {
				at, ok = w.hints.pace(now), true // exits lost besides this one: anyone's
			}
			if !ok {
				w.metrics.HintsIgnored++
				w.log.Debug("an owner exited past its user's budget of hints: the backstop covers it", "pid", gone.PID, "uid", gone.UID)
				continue
			}
			w.log.Debug("an owner exited", "pid", gone.PID, "uid", gone.UID, "held", at.Sub(now).Round(time.Millisecond))
			if t.firstExit.IsZero() {
				t.firstExit = now
			}
			paced(now, at)
			if w.exits.Lost() {
				// Exits were lost to a full channel: anyone's, so a pass
				// at the pace's next turn, past no user's budget.
				paced(now, w.hints.pace(now))
			}
		case d := <-dirs:
			// A user's state dir has a new entry: the next pass reads
			// that user's state again, and learns the owner it names.
			// Lost events (no path) may be anyone's: every user's.
			// Its entry's name is what that read reads of its records.
			uid := d.UID
			switch {
			case d.Path == "":
				uid = platform.NoUID
				w.state.Refresh()
			case d.Name == "":
				w.state.Stale(d.UID)
			default:
				w.state.Changed(d.UID, filepath.Join(d.Path, d.Name))
			}
			now := time.Now()
			if t.pending && pwatch.Settle == 0 {
				// A pass is held already: it reads what this change
				// named (the cache has it), at no cost to the budget —
				// a client's one write of its session file is a create
				// and a write or two, which would spend the budget an
				// exit that follows needs.
				continue
			}
			at, ok := w.hints.allow(uid, now)
			if d.Path == "" {
				at, ok = w.hints.pace(now), true // lost events: anyone's, past no user's budget
			}
			if !ok {
				w.metrics.HintsIgnored++
				continue
			}
			w.log.Debug("a state dir changed", "dir", audit.Printable(d.Path), "uid", d.UID)
			paced(now, at)
		case <-w.adopted:
			w.log.Debug("the init adopted a process")
			if t.firstExit.IsZero() {
				t.firstExit = time.Now()
			}
			hint(time.Now())
		case <-t.held.C:
			w.firstHint, t.pending, t.firstExit = t.firstExit, false, time.Time{}
			return triggerHint, false
		case <-t.due.C:
			return triggerMinAge, false
		case <-t.retry.C:
			return triggerRetry, false
		case <-t.backstop.C:
			return triggerBackstop, false
		case <-hup:
			w.reload()
			return triggerReload, false
		case <-watchdog:
			w.notify("WATCHDOG=1")
		}
	}
}

// What the exits of users' processes may cost: any user can title a
// process like a client or a gateway and start and end such processes
// without end, and each exit would be a pass. A uid's exits trigger at
// most perUID passes in hintWindow, and all users' together at most one
// pass per userGap; root's are not counted. Past its own budget a uid's
// exit is dropped — the backstop still comes — so no user can make the
// watch cost more than a pass every userGap; an exit within its budget
// that comes within userGap of another user's pass is held until the gap
// has passed, never dropped: one user's exits cannot cost another's
// reaction more than userGap.
const (
	perUID     = 3
	hintWindow = 30 * time.Second
	userGap    = 2 * time.Second
)
