package reap

import (
	"context"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
)

// admit asks the gate whether p may be signalled for this tree's item.
func (t *tree) admit(s *platform.Snapshot, p *platform.Process) string {
	return t.opt.Admit(s, p, t.item)
}

// wait waits up to d, and not past the run's deadline nor once ctx is
// done, for every handle's process to be gone and the confinement, if
// any, to be empty (what the tree forked while dying is in it). progress,
// when set, hears at the start and about once a second how many are left.
func (t *tree) wait(ctx context.Context, d time.Duration, progress func(Progress)) {
	deadline := time.Now().Add(d)
	if !t.opt.Deadline.IsZero() && t.opt.Deadline.Before(deadline) {
		deadline = t.opt.Deadline
	}
	var told time.Time
	tell := func() {
		if progress == nil || time.Since(told) < time.Second {
			return
		}
		told = time.Now()
		left := 0
		for _, h := range t.handles {
			if !h.WaitGone(0) {
				left++
			}
		}
		progress(Progress{RootPID: t.root, Step: "grace", Left: left, Total: len(t.handles), Remaining: time.Until(deadline)})
	}
	const slice = 50 * time.Millisecond // how often ctx is looked at
	for _, h := range t.handles {
		for !h.WaitGone(min(max(time.Until(deadline), 0), slice)) {
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				return
			}
			tell()
		}
	}
	for t.conf != nil && t.conf.Populated() && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		tell()
	}
}

// unconfined returns the handles whose process was not moved into the
// tree's confinement.
func (t *tree) unconfined(hs []*kill.Handle) []*kill.Handle {
	if t.conf == nil {
		return hs
	}
	var out []*kill.Handle
	for _, h := range hs {
		if !t.conf.Moved(h.PID) {
			out = append(out, h)
		}
	}
	return out
}

// alive returns the handles whose process has not exited.
func (t *tree) alive() []*kill.Handle {
	var out []*kill.Handle
	for _, h := range t.handles {
		if !h.WaitGone(0) {
			out = append(out, h)
		}
	}
	return out
}

// resume continues the processes a refused or interrupted tree had
// stopped, and gives their confinement up: refusing must leave them as
// they were.
func (t *tree) resume() {
	t.release()
	for _, h := range t.handles {
		t.send(h, kill.Continue)
	}
}

// release moves a tree that will not be killed out of its confinement,
// back where it came from, and records a failure to do so.
func (t *tree) release() {
	if t.conf == nil {
		return
	}
	if err := t.conf.Release(); err != nil {
		t.releaseNote = "confinement not fully released: " + err.Error()
	}
	t.conf = nil
}

func (t *tree) close() {
	for _, h := range t.handles {
		h.Close()
	}
}

// pids is every process of the tree: those handled and those found gone.
func (t *tree) pids() []int {
	out := append([]int(nil), t.gone...)
	for _, h := range t.handles {
		out = append(out, h.PID)
	}
	return out
}

// pidfdNote says so when signals could not go through pidfds (docs/safety.md).
func (t *tree) pidfdNote() string {
	for _, h := range t.handles {
		if !h.Pidfd() {
			return "no pidfd on this kernel: identity re-checked before each kill(2), min_age guards the rest"
		}
	}
	return ""
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}
