package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
	"github.com/orphanreaper/reaper/run/view"
)

// WatchConfig is `reaper watch`: passes that are each exactly the reap
// ReapConfig describes, made when something says one is due.
type WatchConfig struct {
	run.ReapConfig
	// Backstop is the longest time between two passes, whatever the hints
	// say: a lost hint can never lose an orphan (default 1m).
	Backstop time.Duration
	// Poll is the backstop while some owner cannot be watched — no pidfds
	// (an old kernel, a seccomp filter), or an owner whose watch failed —
	// so that its orphans wait no longer than this (default 10s; never
	// more than Backstop).
	Poll time.Duration
	// Gap is the least time from the end of one pass to the start of a
	// pass a hint makes (default 250 ms): the first hint after a quiet
	// spell passes at once, and what comes during a pass or within Gap of
	// it is one pass more, at its end.
	Gap time.Duration
	// Reload reads the policy again (SIGHUP). An invalid file keeps the
	// policy in force.
	Reload func() (*policy.Policy, error)
	// Notify tells the service manager (READY=1, STATUS=…, WATCHDOG=1,
	// STOPPING=1); Watchdog is how often it wants WATCHDOG=1 (0: never).
	// Unset, both are what systemd set in the environment, if anything
	// (sd_notify(3), sd_watchdog_enabled(3)).
	Notify   func(state string)
	Watchdog time.Duration
	// Log says what the watch does: passes, reloads, what it cannot watch.
	Log *slog.Logger
	// OnPass is given each pass's outcome and what triggered it.
	OnPass func(r *run.Reaped, trigger string)
	// Under, when set, is the pid of the init the watch runs inside
	// (reaper run's): the watch sees only what it adopted and its
	// descendants (Under), its adoptions are hints, as an owner's exit is
	// (Adoptions), and Reaped is told when it reaped an adopted child. Its
	// lock is optional, as the init's own reap's is (NoLock is told), and
	// it is lean.
	Under  int
	Reaped <-chan struct{}
	// OnStorm is told of each fork storm as it starts and as it ends
	// (over), after the log line: a desktop notification.
	OnStorm func(s audit.Storm, over bool)
	// Lean returns the heap's free pages to the kernel after each pass
	// (debug.FreeOSMemory, leanAfter it: a collection, then the scavenger
	// at once): an init's watch, idle between passes, keeps only what it
	// holds — one init per sandbox, thousands per host.
	Lean bool
	// Publish, when set, is given each pass's metrics as the textfile
	// holds them (audit.MetricsText), and when the pass completed — and
	// again when a fork storm starts or ends (a --metrics-listen
	// endpoint).
	Publish func(text []byte, beat time.Time)
}

// Trigger names why a pass was made.
const (
	triggerStart    = "start"
	triggerHint     = "hint"
	triggerMinAge   = "min_age"
	triggerBackstop = "backstop"
	triggerReload   = "reload"
	triggerRetry    = "retry"
)

// After a pass that held trees back because some user's state could not
// be read (a reader past its deadline, a state dir in flux), the watch
// tries again after retryFirst, doubling while the doubt stays, never
// past the backstop: a doubt costs its user seconds, not the backstop.
const retryFirst = 2 * time.Second

// Watch makes passes until ctx ends: one at once, then one whenever a hint
// says one is due — the exit of an owner the last pass's evidence named
// (a pidfd each), or a new entry in a client's dir where a new owner's
// file appears (client.Info.Announce), at once (Gap) and within each
// user's budget — whenever a tree the last pass saw reaches
// its min_age, and at least every Backstop. Hints only trigger passes;
// every decision is the pass's. hup receives SIGHUP: the policy is read
// again. It returns nil when ctx ends (SIGTERM, SIGINT): a pass in flight
// continues whatever it stopped, as a reap does when interrupted.
func Watch(ctx context.Context, cfg WatchConfig, hup <-chan os.Signal) error {
	if cfg.Under > 0 {
		if err := Under(&cfg.ReapConfig.Config, cfg.Under); err != nil {
			return err
		}
		cfg.LockOptional, cfg.Lean = true, true
	}
	if cfg.Backstop <= 0 {
		cfg.Backstop = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 10 * time.Second
	}
	if cfg.Gap <= 0 {
		cfg.Gap = 250 * time.Millisecond
	}
	notify := cfg.Notify
	if notify == nil {
		notify = func(state string) { host.Notify(state) }
		if cfg.Watchdog == 0 {
			cfg.Watchdog = host.WatchdogInterval()
		}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Another watch of the same scope would do every pass twice, each
	// waiting on the other's lock: each watch holds the scope's watch lock
	// (beside the reap lock) for its life, and one that finds it held says
	// so at the start, with the holder.
	lockFile := cfg.LockFile
	if lockFile == "" {
		lockFile = paths.Current().Lock
	}
	release, err := platform.Lock(paths.BesideLock(lockFile).Watch, 0)
	var busy *platform.LockBusyError
	switch {
	case err == nil:
		defer release()
	case errors.As(err, &busy):
		holder := "another reaper watch"
		if busy.Holder > 0 {
			holder = fmt.Sprintf("pid %d (%s)", busy.Holder, audit.Printable(busy.Cmd))
		}
		log.Warn("another reaper watch watches this scope already: two do every pass twice, each waiting for the other's lock; stop one of them", "holder", holder, "lock", lockFile)
	}
	exits, err := pwatch.New()
	if err != nil {
		log.Warn("owners' exits are not watched: a pass every poll instead", "poll", min(cfg.Backstop, cfg.Poll), "err", err)
	} else {
		defer exits.Close()
	}
	dirs, err := pwatch.NewDirs()
	if err != nil {
		log.Warn("clients' state dirs are not watched: a new session's owner is watched from the next pass", "err", err)
	} else {
		defer dirs.Close()
	}
	w := &watcher{cfg: cfg, exits: exits, dirs: dirs, log: log, notify: notify, state: gather.NewCache(),
		metrics: audit.WatchMetrics{Passes: map[string]uint64{}, Watching: exits != nil}}
	w.storms = &stormWatch{mine: func(uid uint32) bool { return run.EUID() == 0 || uid == run.EUID() }, say: w.storm, adopter: cfg.Under}
	w.storms.set(cfg.Policy.Defaults)
	w.storms.start(ctx)
	if cfg.Under > 0 {
		// Looked for when something forked (the storm count's own read
		// of the kernel's count), a parent below exited, or the init
		// reaped a child.
		w.adopted = Adoptions(ctx, cfg.Under, w.storms.forked, cfg.Reaped)
	}

	ready := false
	timer := newTimers()
	lean := time.AfterFunc(time.Hour, debug.FreeOSMemory)
	lean.Stop()
	defer lean.Stop()
	for {
		due := w.pass(ctx)
		if cfg.Lean {
			// The heap's free pages back to the kernel once the watch
			// has settled (its first second sets up the fork count).
			lean.Reset(leanAfter)
		}
		// Whatever made it, the pass covered the hints held before it.
		timer.lastPass, timer.pending, timer.firstExit = time.Now(), false, time.Time{}
		timer.held.Stop()
		if !ready {
			notify("READY=1")
			ready = true
		}
		timer.backstop.Reset(w.backstop())
		timer.minAge(due)
		timer.retry.Stop()
		if w.retryIn > 0 {
			timer.retry.Reset(w.retryIn)
		}
		trigger, stop := w.wait(ctx, timer, hup)
		if stop {
			notify("STOPPING=1")
			return nil
		}
		w.trigger = trigger
	}
}

// leanAfter is how long after a pass a Lean watch returns its heap's
// free pages to the kernel.
const leanAfter = 2 * time.Second

// watcher is the state of one watch between passes.
type watcher struct {
	cfg WatchConfig
	// retryIn is when the next pass is due for the last one's doubts (0:
	// none).
	retryIn time.Duration
	exits   *pwatch.Exits // nil: no pidfds, the backstop alone
	dirs    *pwatch.Dirs  // nil: no inotify, new owners from the next pass
	log     *slog.Logger
	notify  func(string)
	trigger string
	passes  int
	hints   hintBudget
	// firstHint is when the first owner's exit a hint pass passes on came.
	firstHint time.Time
	// refreshed is when a pass last read every user's state whole.
	refreshed time.Time
	metrics   audit.WatchMetrics
	// state keeps the state dirs' reads from pass to pass.
	state *gather.Cache
	// storms says the fork storms it sees between passes.
	storms *stormWatch
	// adopted says the Adopter took a new child (nil: none watched).
	adopted <-chan struct{}
	// full are the uids last said to be past their headroom.
	full map[int64]bool
	// last is the last pass's metrics, published again when a storm
	// starts or ends.
	last struct {
		sync.Mutex
		report  *audit.Report
		signals []audit.Record
		took    time.Duration
		metrics audit.WatchMetrics
	}
}

// publish gives Publish the last pass's metrics, with the storms now.
func (w *watcher) publish() {
	if w.cfg.Publish == nil {
		return
	}
	w.last.Lock()
	defer w.last.Unlock()
	if w.last.report == nil {
		return
	}
	m := w.last.metrics
	m.Storms, m.StormsSaid, m.StormsSeen = w.storms.storms()
	w.cfg.Publish(audit.MetricsText(w.last.report, w.last.signals, w.last.took, &m, m.Heartbeat), m.Heartbeat)
}

// sayHeadroom logs each user who came past audit.HeadroomWarnAt since
// the last pass (once, not on every pass while they stay there).
func (w *watcher) sayHeadroom(hs []audit.Headroom) {
	full := map[int64]bool{}
	for _, h := range hs {
		if !h.Warn {
			continue
		}
		full[h.UID] = true
		if !w.full[h.UID] {
			w.log.Warn(h.Warning(), "uid", h.UID, "percent", h.Percent)
		}
	}
	w.full = full
}

// storm says a fork storm as it starts or ends: a log line (the journal's
// under a service manager), the status, and OnStorm's notification.
func (w *watcher) storm(s audit.Storm, over bool) {
	if over {
		w.log.Info(fmt.Sprintf("fork storm over: pid %d (%s)", s.PID, audit.Printable(s.Comm)), "pid", s.PID, "lasted", s.For)
	} else {
		w.log.Warn(s.Line(), "pid", s.PID, "uid", s.UID, "rate", s.Rate, "storm_rate", s.Threshold, "seen", s.Seen)
		w.notify("STATUS=" + audit.Printable(s.Line()))
	}
	if j := w.cfg.Records.Journal; j == "on" || j == "auto" {
		if _, err := audit.JournalStorm(s, over); err != nil {
			w.log.Warn("the storm's journal record was not sent", "err", err)
		}
	}
	if w.cfg.OnStorm != nil {
		w.cfg.OnStorm(s, over)
	}
	go w.publish() // after second() lets the storms go
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

// pass makes one pass, as reap makes it, with a deadline of its own, and
// sets the watched owners from its evidence. It returns when the next
// tree it saw reaches its min_age (zero: none).
func (w *watcher) pass(ctx context.Context) time.Time {
	trigger := w.trigger
	if trigger == "" {
		trigger = triggerStart
	}
	w.passes++
	w.metrics.Passes[trigger]++
	if trigger != triggerHint && trigger != triggerMinAge && trigger != triggerRetry || time.Since(w.refreshed) >= w.cfg.Backstop {
		// The first pass, the backstop and a reload read every user's
		// state whole, and so does the first pass a backstop after the
		// last that did — hints that never stop keep the backstop from
		// coming: a change no hint announced is seen within a backstop.
		w.state.Refresh()
		w.refreshed = time.Now()
	}
	rc := w.cfg.ReapConfig
	rc.Cache = w.state
	rc.Started = time.Now()
	rc.Deadline = rc.Started.Add(w.cfg.Timeout)
	pctx, cancel := context.WithDeadline(ctx, rc.Deadline)
	defer cancel()
	r, err := run.Reap(pctx, rc)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("pass failed: the next hint or the backstop tries again", "trigger", trigger, "err", err)
			// Escaped: sd_notify takes a newline as the start of another
			// assignment (MAINPID=…), and an error may quote a path.
			w.notify(fmt.Sprintf("STATUS=pass %d (%s) failed: %s", w.passes, trigger, audit.Printable(err.Error())))
		}
		return time.Time{}
	}
	defer r.Close()
	// The owners the pass's evidence named are watched from here, the
	// dirs where a new one is announced too; then the pass's traces, with
	// the metrics that say so (the live sessions' figures read from the
	// pass's table, after what it ended).
	w.rearm(r, trigger)
	due := NextDue(r.Pass, time.Now())
	w.doubted(r.Doubts)
	w.metrics.Heartbeat = time.Now()
	w.metrics.Copies, w.metrics.Headroom = view.LiveFigures(r.Pass)
	w.metrics.Storms, w.metrics.StormsSaid, w.metrics.StormsSeen = w.storms.storms()
	w.sayHeadroom(w.metrics.Headroom)
	m := w.metrics
	if w.cfg.Publish != nil {
		// Kept for a fork storm's publish between passes: the report
		// holds the pass's table, let go of otherwise.
		w.last.Lock()
		w.last.report, w.last.signals, w.last.took, w.last.metrics = r.Report, r.Signals, time.Since(rc.Started), m
		w.last.Unlock()
		w.publish()
	}
	if err := r.Record(rc, &m); err != nil {
		w.log.Error("the pass's record was not written", "trigger", trigger, "err", err)
	}
	if w.cfg.OnPass != nil {
		w.cfg.OnPass(r, trigger)
	}
	acted := ended(r)
	w.notify(fmt.Sprintf("STATUS=pass %d (%s) at %s: %s, %d ended; watching %s",
		w.passes, trigger, rc.Started.Format("15:04:05"), audit.Plural(len(r.Plan.Items), "finding"), acted, audit.Plural(w.metrics.Owners, "owner")))
	return due
}

// rearm watches the owners and announce dirs a pass returned, and counts
// them in the metrics.
func (w *watcher) rearm(r *run.Reaped, trigger string) {
	if trigger == triggerHint && !w.firstHint.IsZero() && ended(r) > 0 {
		w.metrics.Reaction += time.Since(w.firstHint)
		w.metrics.ReactionCount++
	}
	if w.exits != nil {
		targets, capped := capOwners(Owners(r.Pass))
		failed := w.exits.Set(targets) + capped
		if failed > 0 {
			w.log.Warn("some owners cannot be watched: the backstop covers them", "owners", failed)
		}
		w.metrics.Owners, w.metrics.Unwatched = w.exits.Len(), failed
	}
	if w.dirs != nil {
		w.dirs.Set(AnnounceDirs(r.Pass))
		w.metrics.Dirs = w.dirs.Len()
	}
	w.metrics.StateReads, w.metrics.StateReused = w.state.Counts()
}

// doubted sets when the next pass tries again the users' state a pass
// could not read: read afresh (their uids stale), retryFirst after the
// first such pass, twice as long after each that follows, at most the
// backstop; no doubt, no retry.
func (w *watcher) doubted(doubts []policy.Doubt) {
	if len(doubts) == 0 {
		w.retryIn = 0
		return
	}
	for _, d := range doubts {
		if d.All {
			w.state.Refresh()
			continue
		}
		w.state.Stale(d.UID)
	}
	w.retryIn = min(max(2*w.retryIn, retryFirst), w.cfg.Backstop)
	w.log.Debug("some users' state was not read: a pass again soon", "doubts", len(doubts), "in", w.retryIn)
}

// backstop is the longest wait before the next pass: Backstop while
// every owner the last pass named is watched, Poll (if shorter) while
// some cannot be — exits not to be watched at all, or a watch that
// failed — since no hint will come for those.
func (w *watcher) backstop() time.Duration {
	if w.exits == nil || w.metrics.Unwatched > 0 {
		return min(w.cfg.Backstop, w.cfg.Poll)
	}
	return w.cfg.Backstop
}

// ended counts the trees a pass ended: killed, or gone before a signal.
func ended(r *run.Reaped) int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == policy.Killed || res.Outcome == policy.Gone {
			n++
		}
	}
	return n
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

// reload reads the policy again; an invalid one is logged, with its file
// and line, and the policy in force is kept.
func (w *watcher) reload() {
	if w.cfg.Reload == nil {
		return
	}
	pol, err := w.cfg.Reload()
	if err != nil {
		var errs policy.Errors
		msg := err.Error()
		if errors.As(err, &errs) && len(errs) > 0 {
			msg = errs.Error()
		}
		w.log.Error("the policy was not reloaded: the one in force is kept", "err", msg)
		return
	}
	w.cfg.Policy = pol
	w.storms.set(pol.Defaults)
	w.log.Info("policy reloaded", "source", pol.Source, "rules", len(pol.Rules))
}

// Owners are the owners the pass's evidence names, alive: the live
// owners the scan met (a policy's [[owner]]s), the owners of the ledgers'
// runs (a session file's claude, a daemon record's daemon, a gateway's
// lock) and of the findings (a tie's, a marker's group leader), and the
// clients' own processes, by their comm. Their exit is when orphans
// appear.
func Owners(p *run.Pass) []pwatch.Target {
	t, cs := p.Table, p.Config.Clients
	s := t.Snap
	seen := map[int]bool{}
	var out []pwatch.Target
	add := func(pid int) {
		if pid <= 1 || seen[pid] {
			return
		}
		seen[pid] = true
		if p := s.Get(pid); p != nil && !p.Zombie() && !p.KernelThread() {
			out = append(out, pwatch.Target{PID: p.PID, StartTicks: p.StartTicks, UID: s.UID(p)})
		}
	}
	for _, p := range t.Result.LiveOwners() {
		add(p.PID)
	}
	for _, lr := range t.Result.Ledger {
		if gone, _ := t.Result.OwnerGone(lr.Ledger); !gone {
			add(lr.Ledger.Owner.PID)
		}
	}
	for i := range t.Result.Findings {
		add(t.Result.Findings[i].OwnerPID)
	}
	infos := make([]client.Info, 0, len(cs.All()))
	for _, c := range cs.All() {
		infos = append(infos, c.Info())
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		for k := range infos {
			if infos[k].Own(s, p) {
				add(p.PID)
				break
			}
		}
	}
	return out
}

// The owners one watch holds a pidfd for: any user can start processes
// titled like a client, and each would be an owner to watch. A uid's
// owners past perUIDOwners, and all past maxOwners, are not watched: the
// watch then polls (WatchConfig.Poll) until they are fewer, and says how
// many it could not watch.
const (
	perUIDOwners = 256
	maxOwners    = 8192
)

// capOwners returns the targets a watch holds a pidfd for — root's
// first, then each uid's up to perUIDOwners, all up to maxOwners — and
// how many it left out.
func capOwners(targets []pwatch.Target) ([]pwatch.Target, int) {
	if len(targets) <= perUIDOwners {
		return targets, 0
	}
	byUID := map[uint32]int{}
	out := make([]pwatch.Target, 0, min(len(targets), maxOwners))
	for _, rootFirst := range []bool{true, false} {
		for _, t := range targets {
			if (t.UID == 0) != rootFirst || len(out) >= maxOwners {
				continue
			}
			if t.UID != 0 && byUID[t.UID] >= perUIDOwners {
				continue
			}
			byUID[t.UID]++
			out = append(out, t)
		}
	}
	return out, len(targets) - len(out)
}

// AnnounceDirs are the dirs below the state dirs the pass went through —
// read, or passed over for their user's owning no process — where their
// client makes a file as an owner starts (client.Info.Announce). A dir
// that does not exist yet is not watched; the backstop covers it.
func AnnounceDirs(p *run.Pass) []pwatch.Dir {
	cs := p.Config.Clients
	var out []pwatch.Dir
	for _, d := range p.Dirs {
		c := cs.ByName(d.Client)
		if c == nil {
			continue
		}
		for _, rel := range c.Info().Announce {
			out = append(out, pwatch.Dir{Path: filepath.Join(d.Path, rel), UID: d.UID})
		}
	}
	return out
}

// NextDue is when the next of the pass's orphaned trees reaches an age a
// rule or the defaults ask for (min_age), after now (zero: none): a pass
// is due then, for what was too young is not yet an orphan the policy
// acts on.
func NextDue(p *run.Pass, now time.Time) time.Time {
	t, pol := p.Table, p.Config.Policy
	ages := []time.Duration{pol.Defaults.MinAge}
	for _, r := range pol.Rules {
		if r.MinAge > 0 {
			ages = append(ages, r.MinAge)
		}
	}
	var due time.Time
	s := t.Snap
	for i := range t.Result.Findings {
		started := s.Started(t.Result.Findings[i].Root)
		for _, a := range ages {
			if at := started.Add(a); at.After(now) && (due.IsZero() || at.Before(due)) {
				due = at
			}
		}
	}
	return due
}
