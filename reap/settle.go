package reap

import (
	"context"
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// settleNote is what a dry run says of a tree under a client's supervisor.
func settleNote(f *scan.Finding) string {
	if f.Supervisor == "" {
		return ""
	}
	return fmt.Sprintf("the root is the %s: a reap first gives it up to the settle wait to finish its own cleanup", f.Supervisor)
}

// settle lets a client's supervisor at the tree's root finish its own
// cleanup: it waits, bounded by SettleWait, the run's deadline and ctx, for
// the root to exit. When the whole tree went with it, the result is
// gone and done is set: nothing was signalled. Otherwise the reap goes on
// with what is left (a supervisor still alive after the wait is stuck),
// and the result's Detail says so.
func (t *tree) settle(ctx context.Context, f *scan.Finding) (Result, bool) {
	var root *kill.Handle
	for _, h := range t.handles {
		if h.PID == f.Root.PID {
			root = h
		}
	}
	if root == nil {
		return Result{Detail: f.Supervisor + " had exited already"}, false
	}
	deadline := time.Now().Add(t.opt.SettleWait)
	if !t.opt.Deadline.IsZero() && t.opt.Deadline.Before(deadline) {
		deadline = t.opt.Deadline
	}
	for !root.WaitGone(min(max(time.Until(deadline), 0), 50*time.Millisecond)) {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return Result{Detail: fmt.Sprintf("the %s was still alive after %s: acted on", f.Supervisor, t.opt.SettleWait)}, false
		}
	}
	if len(t.alive()) == 0 {
		return Result{Outcome: policy.Gone, Detail: "the " + f.Supervisor + " finished its own cleanup: nothing signalled", PIDs: t.pids()}, true
	}
	return Result{Detail: "the " + f.Supervisor + " exited; what it left is reaped"}, false
}
