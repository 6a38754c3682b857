package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
)

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
	if w.cfg.Desktop != nil {
		if _, err := w.cfg.Desktop.Pass(r.Report); err != nil {
			w.log.Warn("a notification was not sent", "err", err)
		}
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
