package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/notify"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
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
	// Desktop, when set, is told what each pass ended and the large
	// trees it only reported, and of each fork storm as it starts
	// (--notify).
	Desktop *notify.Notifier
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
