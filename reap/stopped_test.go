package reap

import (
	"context"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// An interrupt (the caller's context canceled) is the outcome interrupted;
// the run's deadline, failed: one word for an interrupt in reap, watch and
// run (issue 64, item 11), and a run out of time still a failure.
func TestStoppedOutcome(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := stoppedOutcome(ctx); got != policy.Interrupted || stopped(ctx) != "the run was interrupted" {
		t.Errorf("canceled: %s, %q", got, stopped(ctx))
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if got := stoppedOutcome(ctx); got != policy.Failed || stopped(ctx) != "the run's time ran out" {
		t.Errorf("past its deadline: %s, %q", got, stopped(ctx))
	}
}
